#!/usr/bin/python3
"""Check a livetrack JSON report: validate it against the schema, then
evaluate each CHECK (a Python expression over `r`, the parsed report).

usage: check_report_json.py SCHEMA REPORT [CHECK...]

Helpers available to checks:
  site_lines(site)  the (file basename, line) of every frame of a site
  sites_at(file, line)  the sites with a frame at file:line (basename)
Exit status 0 when the report is valid and every check holds; 1 otherwise,
with one line per failure on stderr.
"""
import json
import os
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import jsonschema
    except ImportError:
        print("check_report_json: python3-jsonschema is missing (scripts/setup-deps.sh installs it)",
              file=sys.stderr)
        return 1
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    # Strict UTF-8: the report promises valid UTF-8.
    with open(argv[2], "rb") as f:
        raw = f.read()
    try:
        r = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        print(f"check_report_json: {argv[2]} is not valid JSON: {error}", file=sys.stderr)
        return 1
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = sorted(validator_class(schema).iter_errors(r), key=lambda e: list(e.path))
    for error in errors[:20]:
        print(f"check_report_json: schema: at {'/'.join(map(str, error.path))}: {error.message}", file=sys.stderr)

    def site_lines(site):
        return [(os.path.basename(f["file"] or ""), f["line"]) for f in site["frames"]]

    def sites_at(file, line):
        return [s for s in r["sites"] if (file, line) in site_lines(s)]

    scope = {"r": r, "site_lines": site_lines, "sites_at": sites_at, "len": len, "any": any, "all": all,
             "sum": sum, "sorted": sorted, "set": set, "os": os}
    failed = len(errors)
    for check in argv[3:]:
        try:
            ok = eval(check, scope)  # the checks come from our own tests
        except Exception as error:  # report the check, keep going
            ok = False
            print(f"check_report_json: {check!r} raised {type(error).__name__}: {error}", file=sys.stderr)
        if not ok:
            failed += 1
            print(f"check_report_json: failed: {check}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
