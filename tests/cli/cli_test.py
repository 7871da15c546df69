#!/usr/bin/env python3
"""End-to-end tests of the `livetrack` command (ctest names cli_*).

usage: cli_test.py CASE --livetrack BIN --work DIR [--app BIN] [--samples DIR]
                   [--source DIR] [--build DIR] [--chromium BIN] [--sanitize]

Each CASE is one ctest. Checks print "FAIL: ..." and make the exit status 1;
a case that cannot run here (no Chromium) exits 77, which ctest reports as
skipped.
"""
import argparse
import collections
import csv
import gzip
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_pprof  # noqa: E402

SKIP = 77
failures = []
args = None


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, flush=True)
    return condition


def run(command, expect=None, env=None, timeout=120, stdin_path=None):
    merged = dict(os.environ)
    merged.update(env or {})

    def once():
        stdin = open(stdin_path, "rb") if stdin_path else None
        try:
            return subprocess.run(command, capture_output=True, text=True, env=merged, timeout=timeout, stdin=stdin)
        finally:
            if stdin:
                stdin.close()
    result = once()
    # LeakSanitizer's own tracer crashing at exit (google/sanitizers#1353)
    # says nothing of the program: run it once more (as tests/child_process.h
    # does). Leaks it detects are never retried.
    if "LeakSanitizer has encountered a fatal error" in result.stderr:
        print("note: LeakSanitizer's tracer crashed in %s (a sanitizer flake); running it again" % command[0])
        result = once()
    if expect is not None:
        check(result.returncode == expect,
              "%s exited with %d, expected %d\nstdout: %s\nstderr: %s"
              % (" ".join(command), result.returncode, expect, result.stdout[-3000:], result.stderr[-3000:]))
    return result


def livetrack(*argv, **kw):
    return run([args.livetrack] + [str(a) for a in argv], **kw)


def work(name):
    return os.path.join(args.work, name)


def fixture(name):
    return os.path.join(HERE, "fixtures", name)


# ---- checks of the outputs -----------------------------------------------

def check_trace(path, leaks=None, misuse=None, types=()):
    trace = json.load(open(path))
    events = trace["traceEvents"]
    counters = [e for e in events if e["ph"] == "C"]
    instants = [e for e in events if e["ph"] == "i"]
    check(counters, "%s: no counter events" % path)
    for e in events:
        check(isinstance(e.get("ts"), (int, float)) and e.get("pid") is not None, "%s: bad event %r" % (path, e))
    names = {e["name"] for e in counters}
    for wanted in ("live objects (all types)", "live bytes") + tuple(types):
        check(wanted in names, "%s: no counter track %r (have %s)" % (path, wanted, sorted(names)))
    last = {}
    for e in counters:
        check(e["ts"] >= last.get(e["name"], 0), "%s: counter %s goes back in time" % (path, e["name"]))
        last[e["name"]] = e["ts"]
    leak_events = [e for e in instants if e["name"].startswith("leak:")]
    misuse_events = [e for e in instants if e["name"].startswith("misuse:")]
    if leaks is not None:
        check(len(leak_events) == leaks, "%s: %d leak instants, expected %d" % (path, len(leak_events), leaks))
    if misuse is not None:
        check(len(misuse_events) == misuse, "%s: %d misuse instants, expected %d" % (path, len(misuse_events), misuse))
    return trace


def check_csv_replays_to_json(csv_path, json_path):
    """Each type's last type_live in the timeline is what the exit JSON
    lists live of it: a parent that ended with its last child needs its
    own row (event "freed") for this to hold."""
    last = {}
    with open(csv_path, newline="") as rows:
        for row in csv.DictReader(rows):
            if row["event"] != "misuse":
                last[(row["api"], row["type"])] = int(row["type_live"])
    live = collections.Counter((o["api"], o["type"]) for o in json.load(open(json_path))["objects"])
    for key, count in sorted(last.items()):
        check(count == live.get(key, 0), "%s: %s %s ends with %d live, the JSON lists %d" %
              (csv_path, key[0], key[1], count, live.get(key, 0)))
    return last


def check_svg(path):
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        check(False, "%s is not well-formed XML: %s" % (path, error))
        return None
    check(root.tag == "{http://www.w3.org/2000/svg}svg", "%s: root is %s, not svg" % (path, root.tag))
    return root


def check_html(path, with_json=True):
    html = open(path, encoding="utf-8").read()
    check(html.startswith("<!DOCTYPE html>"), "%s: no doctype" % path)
    check("<script" not in html.lower(), "%s: has a script" % path)
    for pattern in (r"\bsrc\s*=", r"href\s*=\s*\"?https?:", r"url\(", r"@import", r"<link\b"):
        check(not re.search(pattern, html, re.I), "%s: refers to something outside (%s)" % (path, pattern))
    for title in ("Live objects by type", "Live bytes", "Process memory", "Leaks by call site", "API calls by count",
                  "API calls by VmRSS change", "Objects per API and type"):
        check(title in html, "%s: no section %r" % (path, title))
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    check(len(svgs) >= 5, "%s: only %d charts" % (path, len(svgs)))
    for svg in svgs:
        try:
            ElementTree.fromstring(svg)
        except ElementTree.ParseError as error:
            check(False, "%s: a chart is not well-formed: %s" % (path, error))
    check("time since the program started" in html and "live objects" in html, "%s: axes not labelled" % path)
    if with_json:
        check("Call stacks" in html, "%s: no call stacks" % path)
    return html


def decode_png(path):
    """(width, height, set of RGBA colours, fraction of non-background pixels)."""
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    at, idat, width = 8, b"", 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    check(depth == 8 and colour in (2, 6), "%s: unexpected PNG format %d/%d" % (path, depth, colour))
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + predictor) & 0xFF
        rows.append(bytes(line))
        previous = line
    colours, counts = set(), {}
    for line in rows[::2]:
        for i in range(0, stride, channels * 2):
            pixel = line[i:i + 3]
            colours.add(pixel)
            counts[pixel] = counts.get(pixel, 0) + 1
    background = max(counts.values())
    busy = 1 - background / sum(counts.values())
    return width, height, colours, busy


# ---- the cases --------------------------------------------------------------

def case_help():
    header = open(os.path.join(args.source, "include", "livetrack", "livetrack.h")).read()
    version = ".".join(re.search(r"LIVETRACK_VERSION_%s (\d+)" % part, header).group(1)
                       for part in ("MAJOR", "MINOR", "PATCH"))
    for flag in ("--version", "-V"):
        out = livetrack(flag, expect=0).stdout
        check(out.strip() == "livetrack " + version, "%s printed %r, expected livetrack %s" % (flag, out, version))
    main_help = livetrack("--help", expect=0).stdout
    commands = ("run", "report", "diff", "plot", "trace", "pprof")
    for command in commands:
        check(re.search(r"^  %s " % command, main_help, re.M), "--help does not list %s" % command)
        text = livetrack(command, "--help", expect=0).stdout
        check(text.startswith("usage: livetrack " + command), "%s --help starts with %r" % (command, text[:40]))
        check(livetrack("help", command, expect=0).stdout == text, "help %s differs from %s --help" % (command, command))
        # the overview's synopsis names every option of the command's own usage line
        synopsis = re.search(r"^ +(livetrack %s .*)$" % command, main_help, re.M)
        for option in re.findall(r"--[a-z-]+", text.splitlines()[0]):
            check(synopsis and option in synopsis.group(1),
                  "--help's synopsis of %s lacks %s: %r" % (command, option, synopsis and synopsis.group(1)))
    check(livetrack("-h", expect=0).stdout == main_help and livetrack("help", expect=0).stdout == main_help,
          "-h / help differ from --help")

    # Every setting of the core is an option of run (same names as the README's table).
    settings = open(os.path.join(args.source, "layer", "core", "settings.c")).read()
    run_help = livetrack("run", "--help", expect=0).stdout
    for name in re.findall(r'\{"(LIVETRACK_[A-Z_]+)"', settings):
        check(name in run_help, "run --help does not mention %s" % name)
    for option in ("--api", "--json", "--csv", "--output", "--stack-depth", "--release-stacks", "--suppressions",
                   "--fail-on-leak", "--peak", "--report", "--transparent", "--max-diagnostics", "--no-crash-report",
                   "--verbose"):
        check(option in run_help, "run --help does not mention %s" % option)

    json_file, csv_file = fixture("run.json"), fixture("run.csv")
    bad = [
        [], ["bogus"], ["--bogus"], ["help", "nope"], ["help", "run", "x"], ["--version=1"],
        ["report"], ["report", json_file, "--by", "colour"], ["report", json_file, "--top", "-1"],
        ["report", json_file, "--top"], ["report", json_file, "extra"], ["report", "/nonexistent.json"],
        ["report", csv_file], ["report", json_file, "--help=x"],
        ["diff", json_file], ["diff", json_file, json_file, json_file], ["diff", json_file, "/nonexistent.json"],
        ["diff", json_file, json_file, "--source-root", "/a"], ["diff", json_file, json_file, "--source-root=/a="],
        ["diff", json_file, json_file, "--source-root", "=/b"], ["diff", json_file, json_file, "--source-root"],
        ["plot", csv_file], ["plot", "-o", work("x.html")], ["plot", json_file, "-o", work("x.html")],
        ["plot", csv_file, csv_file, "-o", work("x.html")], ["plot", csv_file, "-o", "/nonexistent/dir/x.html"],
        ["trace", csv_file], ["trace", "/nonexistent.csv", "-o", work("x.json")], ["trace", json_file, "-o", work("x.json")],
        ["pprof", json_file], ["pprof", json_file, "--set", "both", "-o", work("x.pb.gz")],
        ["run"], ["run", "--json"], ["run", "--stack-depth", "65", "--", "true"], ["run", "--stack-depth=x", "true"],
        ["run", "--fail-on-leak=0", "true"], ["run", "--fail-on-leak=256", "true"], ["run", "--api", "metal", "true"],
        ["run", "--report", "sometimes", "true"], ["run", "--max-diagnostics", "-2", "true"],
        ["run", "--suppressions", "/nonexistent.supp", "true"], ["run", "--suppressions", "/tmp", "true"],
        ["run", "--unknown", "true"], ["run", "--"],
    ]
    for argv in bad:
        result = livetrack(*argv)
        lines = result.stderr.strip().splitlines()
        check(result.returncode == 2, "livetrack %s exited with %d, expected 2" % (" ".join(argv), result.returncode))
        check(len(lines) == 1 and lines[0].startswith("livetrack"),
              "livetrack %s: not one line of error: %r" % (" ".join(argv), result.stderr))
    # a file that cannot be opened is named with the reason, wherever it is given
    for inputs in ([csv_file, "/nonexistent.json"], ["/nonexistent.json", csv_file], ["/nonexistent.json"]):
        result = livetrack("plot", *inputs, "-o", work("x.html"), expect=2)
        check("cannot read /nonexistent.json: No such file or directory" in result.stderr,
              "plot %s: the unreadable file is not named: %r" % (" ".join(inputs), result.stderr))


def moved_report(path, old_dir, new_dir, name, edit=None):
    """The report at `path` as if the program had been checked out and built
    under new_dir instead of old_dir (another CI workspace): every file and
    module path moved; `edit` may change the document further."""
    document = json.load(open(path))
    for site in document["sites"]:
        for frame in site["frames"]:
            for key in ("file", "module"):
                if old_dir and (frame.get(key) or "").startswith(old_dir):
                    frame[key] = new_dir + frame[key][len(old_dir):]
    if edit:
        edit(document)
    with open(work(name), "w") as out:
        json.dump(document, out)
    return work(name)


def check_diff_moved_sources(base, json_file):
    # The same code in another directory (CI jobs in different workspaces):
    # diff finds the directory that moved and matches the sites through it.
    moved = moved_report(json_file, "/home/dev/app/", "/builds/runner/7/app/", "moved.json")
    for extra in ([], ["--ignore-lines"]):
        out = livetrack("diff", *extra, json_file, moved, expect=0).stdout
        check("no new leak sites" in out and "2 sites also leaking" in out and
              "files under /home/dev/ in %s compared as under /builds/runner/7/ in" % json_file in out,
              "diff %s of a report moved to another directory:\n%s" % (" ".join(extra), out))
    # ... and still finds the site that is new, the old one matched
    out = livetrack("diff", base, moved, expect=1).stdout
    check("1 new leak site" in out and "make_buffer (helpers.h:17)" in out and "1 site also leaking" in out and
          "main (leaky.c:42)" not in out.split("new:")[1], "diff base, moved new:\n" + out)

    # A new leak in a file of the same name in another directory of the
    # same checkout is new: the reports share leaky.c, so nothing is moved.
    def leak_in(directory):
        def edit(document):
            site = document["sites"][0]
            site["frames"] = [dict(site["frames"][0], function="fill", file=directory + "util.c", line=5)] + \
                site["frames"]
        return edit
    util_a = moved_report(json_file, "", "", "util_a.json", leak_in("/home/dev/app/a/"))
    util_b = moved_report(json_file, "", "", "util_b.json", leak_in("/home/dev/app/b/"))
    out = livetrack("diff", util_a, util_b, expect=1).stdout
    check("1 new leak site" in out and "fill (util.c:5)" in out and "compared as under" not in out,
          "diff: util.c of another directory of one checkout taken for the old one:\n" + out)
    # Moved, with a leak in a new directory: that one is new, the rest are matched.
    moved_new_dir = moved_report(json_file, "/home/dev/app/", "/builds/runner/7/app/", "moved_new_dir.json",
                                 leak_in("/builds/runner/7/app/lib/"))
    out = livetrack("diff", json_file, moved_new_dir, expect=1).stdout
    check("1 new leak site" in out and "fill (util.c:5)" in out and "1 site also leaking" in out and
          "compared as under /builds/runner/7/ in" in out, "diff: a moved report with a new leak:\n" + out)

    # Reports that share a file outside /usr and /lib (an SDK's header in
    # /opt on both machines) are not moved on a guess; --source-root says
    # which directory moved.
    def with_sdk(document):
        document["sites"][1]["frames"].append({"function": "sdk_call", "file": "/opt/sdk/include/sdk.h", "line": 3,
                                               "module": "/opt/sdk/lib/libsdk.so", "offset": "0x10"})
    sdk_old = moved_report(json_file, "", "", "sdk_old.json", with_sdk)
    sdk_new = moved_report(json_file, "/home/dev/app/", "/builds/runner/7/app/", "sdk_new.json", with_sdk)
    livetrack("diff", sdk_old, sdk_new, expect=1)
    for root in ("/home/dev/app=/builds/runner/7/app", "/home/dev/app/=/builds/runner/7/app/"):
        out = livetrack("diff", sdk_old, sdk_new, "--source-root", root, expect=0).stdout
        check("no new leak sites" in out and "compared as under /builds/runner/7/app/ in" in out,
              "diff --source-root %s:\n%s" % (root, out))
    # a directory is never the start of a longer name: /home/dev/ap is not /home/dev/app;
    # a BASE_DIR that holds none of BASE's files is said on stderr, not taken silently
    for root in ("/home/dev/ap=/builds/runner/7/ap", "/nowhere=/builds/runner/7/app", "home/dev/app=/b/app"):
        result = livetrack("diff", sdk_old, sdk_new, "--source-root=" + root, expect=1)
        lines = result.stderr.strip().splitlines()
        check(len(lines) == 1 and "warning: --source-root %s: no source file of %s" % (root, sdk_old) in lines[0]
              and "compared as under" not in result.stdout, "diff --source-root=%s: %r" % (root, result.stderr))
    # ... and then diff does as without the option: the moved directory is still found
    result = livetrack("diff", json_file, moved, "--source-root", "/nowhere=/x", expect=0)
    check("warning: --source-root" in result.stderr and "compared as under /builds/runner/7/ in" in result.stdout,
          "diff --source-root that matches nothing, inferred:\n%s%s" % (result.stdout, result.stderr))
    # so is a NEW_DIR under which NEW has no file: a typo, or a relative name (the files are absolute)
    for root, why in (("/home/dev/app=/builds/runner/7/ap", "no source file of %s is under its NEW_DIR "
                       "/builds/runner/7/ap/" % sdk_new),
                      ("/home/dev/app=builds/runner/7/app", "its NEW_DIR builds/runner/7/app/ is relative")):
        result = livetrack("diff", sdk_old, sdk_new, "--source-root", root, expect=1)
        lines = result.stderr.strip().splitlines()
        check(len(lines) == 1 and ("warning: --source-root %s: " % root) + why in lines[0] and
              "compared as under" not in result.stdout, "diff --source-root %s: %r" % (root, result.stderr))
        result = livetrack("diff", json_file, moved, "--source-root", root, expect=0)
        check("warning: --source-root" in result.stderr and "compared as under /builds/runner/7/ in" in result.stdout,
              "diff --source-root %s, inferred:\n%s%s" % (root, result.stdout, result.stderr))

    # a NEW without leak sites has no file to check the NEW_DIR against: no warning
    def no_leaks(document):
        document["sites"], document["summary"]["leaked_objects"] = [], 0
    clean = moved_report(json_file, "", "", "clean.json", no_leaks)
    result = livetrack("diff", sdk_old, clean, "--source-root", "/home/dev/app=/builds/runner/7/app", expect=0)
    check(not result.stderr and "compared as under /builds/runner/7/app/ in" in result.stdout,
          "diff --source-root with a NEW without leaks:\n%s%s" % (result.stdout, result.stderr))
    # Directories with '=' in their names (Jenkins' matrix axes "label=linux"),
    # on either side: split where BASE_DIR is a directory of BASE's files.
    for old_dir, new_dir in (("/ws/label=a/app/", "/ws/c/app/"), ("/ws/a/app/", "/ws/label=c/app/"),
                             ("/ws/x=a/app/", "/ws/x=c/app/")):
        eq_old = moved_report(json_file, "/home/dev/app/", old_dir, "eq_old.json", with_sdk)
        eq_new = moved_report(json_file, "/home/dev/app/", new_dir, "eq_new.json", with_sdk)
        root = old_dir.rstrip("/") + "=" + new_dir.rstrip("/")
        result = livetrack("diff", eq_old, eq_new, "--source-root", root, expect=0)
        check("no new leak sites" in result.stdout and "files under %s in %s compared as under %s in" %
              (old_dir, eq_old, new_dir) in result.stdout and not result.stderr,
              "diff --source-root %s:\n%s%s" % (root, result.stdout, result.stderr))

    # Checked out at /app in one job and /builds/grp/app in the other: the
    # root is not the moved directory (it would move /usr/include's headers
    # too), /app/ is; files under /usr stay as they are, in either direction.
    def with_stl(document):
        for site in document["sites"]:
            site["frames"].insert(0, {"function": "std::vector<int>::push_back",
                                      "file": "/usr/include/c++/12/bits/stl_vector.h", "line": 1287,
                                      "module": "/app/leaky", "offset": "0x1200", "inlined": True})
    at_app = moved_report(json_file, "/home/dev/app/", "/app/", "at_app.json", with_stl)
    at_builds = moved_report(json_file, "/home/dev/app/", "/builds/grp/app/", "at_builds.json", with_stl)
    for old, new, old_dir, new_dir in ((at_app, at_builds, "/app/", "/builds/grp/app/"),
                                       (at_builds, at_app, "/builds/grp/app/", "/app/")):
        out = livetrack("diff", old, new, expect=0).stdout
        check("no new leak sites" in out and "2 sites also leaking" in out and
              "files under %s in %s compared as under %s in" % (old_dir, old, new_dir) in out,
              "diff of reports checked out at %s and %s:\n%s" % (old_dir, new_dir, out))
    # a root given as BASE_DIR moves the checkout's files, never /usr's
    out = livetrack("diff", at_app, at_builds, "--source-root", "/=/builds/grp", expect=0).stdout
    check("no new leak sites" in out and "files under / in %s compared as under /builds/grp/ in" % at_app in out,
          "diff --source-root /=/builds/grp:\n" + out)

    # A checkout under /usr (Docker's WORKDIR /usr/src/app) is never guessed,
    # but named it is moved, every file under it; /usr itself is not a
    # checkout: naming it moves nothing (it holds no file outside /usr).
    at_usr = moved_report(json_file, "/home/dev/app/", "/usr/src/app/", "at_usr.json", with_stl)
    at_builds_app = moved_report(json_file, "/home/dev/app/", "/builds/app/", "at_builds_app.json", with_stl)
    livetrack("diff", at_usr, at_builds_app, expect=1)
    for root in ("/usr/src/app=/builds/app", "/usr/src/app/=/builds/app/"):
        result = livetrack("diff", at_usr, at_builds_app, "--source-root", root, expect=0)
        check("no new leak sites" in result.stdout and "2 sites also leaking" in result.stdout and
              "files under /usr/src/app/ in %s compared as under /builds/app/ in" % at_usr in result.stdout and
              not result.stderr, "diff --source-root %s:\n%s%s" % (root, result.stdout, result.stderr))
    for root in ("/usr=/builds", "/=/builds"):
        result = livetrack("diff", at_usr, at_builds_app, "--source-root", root, expect=1)
        check("warning: --source-root %s: no source file of %s" % (root, at_usr) in result.stderr and
              "compared as under" not in result.stdout, "diff --source-root %s: %r" % (root, result.stderr))


def feed_pipe(path_or_fd, data):
    """Writes `data` to a FIFO (opened here, which waits for its reader) or
    to a pipe's write end, from a thread, and closes it: a reader that
    stops early or never comes must not stop the test."""
    def write():
        try:
            with (open(path_or_fd, "wb") if isinstance(path_or_fd, str) else os.fdopen(path_or_fd, "wb")) as out:
                out.write(data)
        except OSError:
            pass
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def check_plot_of_pipes(csv_file, json_file):
    """Inputs that can be read only once (a pipe through <(...) or
    /dev/stdin, a FIFO): plot opens each input once and tells the report
    from the timeline by the first byte of the very stream it then reads.
    Looking into a separate open first took the first 4 KiB of a pipe, and
    a FIFO's second open waited for a writer for ever."""
    data = {"csv": open(csv_file, "rb").read(), "json": open(json_file, "rb").read()}
    check(len(data["csv"]) > 4096, "the fixture timeline is too small to lose a stdio buffer of it")

    def plot(name, inputs, stdin_data=None, pass_fds=()):
        try:
            result = subprocess.run([args.livetrack, "plot"] + inputs + ["-o", work(name)], input=stdin_data,
                                    capture_output=True, timeout=30, pass_fds=pass_fds)
        except subprocess.TimeoutExpired:
            return check(False, "plot %s: still running after 30 s (an input opened twice?)" % " ".join(inputs))
        return check(result.returncode == 0 and "make_buffer (helpers.h:17)" in check_html(work(name)),
                     "plot %s exited with %d: %s" % (" ".join(inputs), result.returncode, result.stderr.decode()))

    # through standard input, by name and as "-", either file
    plot("pipe-stdin-csv.html", ["/dev/stdin", json_file], data["csv"])
    plot("pipe-stdin-json.html", [csv_file, "/dev/stdin"], data["json"])
    plot("pipe-dash-csv.html", ["-", json_file], data["csv"])
    plot("pipe-dash-json.html", [csv_file, "-"], data["json"])
    # process substitution: both inputs pipes, in either order
    for order in (("csv", "json"), ("json", "csv")):
        fds, inputs = [], []
        for kind in order:
            read_end, write_end = os.pipe()
            feed_pipe(write_end, data[kind])
            fds.append(read_end)
            inputs.append("/dev/fd/%d" % read_end)
        plot("pipe-fds-%s.html" % order[0], inputs, pass_fds=fds)
        for fd in fds:
            os.close(fd)
    # named FIFOs whose writers finish
    for kind in ("csv", "json"):
        fifo = work("plot-input.fifo")
        if os.path.exists(fifo):
            os.unlink(fifo)
        os.mkfifo(fifo)
        feed_pipe(fifo, data[kind])
        plot("fifo-%s.html" % kind, [fifo, json_file] if kind == "csv" else [csv_file, fifo])
        os.unlink(fifo)


def case_fixtures():
    json_file, base, csv_file = fixture("run.json"), fixture("base.json"), fixture("run.csv")
    # The hand-written reports must stay valid under the core's schema.
    try:
        import jsonschema
        schema = json.load(open(os.path.join(args.source, "docs", "livetrack-report.schema.json")))
        for path in (json_file, base):
            try:
                jsonschema.validate(json.load(open(path)), schema)
            except jsonschema.ValidationError as error:
                check(False, "%s does not follow the report schema: %s" % (path, error.message))
    except ImportError:
        print("no jsonschema: fixtures not validated against the schema")

    # Counts near 2^63: two sites of 2^62 objects (alike, so diff merges
    # them) add up past int64; totals saturate instead of going negative.
    huge = json.load(open(json_file))
    site = dict(huge["sites"][0], objects=2 ** 62, bytes=2 ** 63)
    huge["sites"] = [site, dict(site, id=site["id"] + 1000)]
    huge["summary"] = dict(huge["summary"], leaked_objects=2 ** 63)
    empty = dict(huge, sites=[], summary=dict(huge["summary"], leaked_objects=0))
    with open(work("huge.json"), "w") as out:
        json.dump(huge, out)
    with open(work("empty.json"), "w") as out:
        json.dump(empty, out)
    result = livetrack("pprof", work("huge.json"), "-o", work("huge.pb.gz"), expect=0)
    check("wrote %s: %d leaked objects" % (work("huge.pb.gz"), 2 ** 63) in result.stderr,
          "pprof: the total of huge sites is not 2^63: %r" % result.stderr)
    out = livetrack("diff", work("empty.json"), work("huge.json"), expect=1).stdout
    check(": %d objects (" % (2 ** 63) in out and "\nnew: %d objects (" % (2 ** 63) in out,
          "diff: the merged huge sites do not total 2^63:\n" + out)
    # report and plot read the summary's 2^63 as the most they can show, not as none
    out = livetrack("report", work("huge.json"), expect=0).stdout
    check("\n  9,223,372,036,854,775,807 leaked objects" in out, "report: a 2^63 count read as: " + out[:300])
    livetrack("plot", csv_file, work("huge.json"), "-o", work("huge.html"), expect=0)
    check("Leaked at exit" in open(work("huge.html")).read() and
          'class="card good"' not in open(work("huge.html")).read().split("Leaked at exit")[0][-200:],
          "plot: a 2^63 leak count shown as none")

    # Call sites off: the sites are kinds of object, named by their types
    # alone, as the exit report groups them.
    no_stacks = json.load(open(json_file))
    no_stacks["settings"]["stack_depth"] = 0
    no_stacks["sites"] = [dict(site, frames=[]) for site in no_stacks["sites"]]
    with open(work("no_stacks.json"), "w") as out:
        json.dump(no_stacks, out)
    out = livetrack("report", work("no_stacks.json"), expect=0).stdout
    check("call sites are off (LIVETRACK_STACK_DEPTH=0): leaks are grouped by type" in out and
          " call sites" not in out.split("\n")[1] and "leaked at" not in out and "(no stack)" not in out,
          "report of a --stack-depth 0 file:\n" + out)
    no_stacks_before = dict(no_stacks, sites=[], summary=dict(no_stacks["summary"], leaked_objects=0))
    with open(work("no_stacks_before.json"), "w") as out:
        json.dump(no_stacks_before, out)
    out = livetrack("diff", work("no_stacks_before.json"), work("no_stacks.json"), expect=1).stdout
    new_lines = [line for line in out.split("\n") if line.startswith("new: ")]
    check(new_lines and all(line.count("cl_") == 1 and "leaked at" not in line for line in new_lines),
          "diff of --stack-depth 0 files: the kind said twice:\n" + out)

    check("(no stack: run with --stack-depth above 0 to see call sites)" in out,
          "report of a --stack-depth 0 file: no hint to turn call sites on:\n" + out)
    # Call sites on, one site without a stack (made by
    # livetrack_create_with_stack without one): nothing to turn on.
    one_bare = json.load(open(json_file))
    one_bare["sites"][0] = dict(one_bare["sites"][0], frames=[])
    with open(work("one_bare.json"), "w") as out:
        json.dump(one_bare, out)
    out = livetrack("report", work("one_bare.json"), expect=0).stdout
    check("(call stack not recorded)" in out and "--stack-depth" not in out,
          "report: a site without a stack while call sites were on:\n" + out)
    livetrack("plot", csv_file, work("one_bare.json"), "-o", work("one_bare.html"), expect=0)
    page = open(work("one_bare.html")).read()
    check("(call stack not recorded)" in page and "--stack-depth" not in page,
          "plot: a site without a stack while call sites were on")

    out = livetrack("report", json_file, expect=0).stdout
    first, second = out.find("leaked at make_buffer (helpers.h:17)"), out.find("leaked at main (leaky.c:42)")
    check(0 < first < second, "report: sites not largest first:\n" + out)
    check("third_party_init" not in out and "2 leaked objects (64 B) suppressed" in out,
          "report: suppressed site listed or not counted")
    # frames read as in the exit report (layer/core/frames.c)
    check("#0 0x55d0c0de1400 in make_buffer /home/dev/app/helpers.h:17:12 (/home/dev/app/leaky+0x1400) [inlined]"
          in out and "#1 0x55d0c0de1400 in setup /home/dev/app/leaky.c:30:3 (/home/dev/app/leaky+0x1400)\n" in out,
          "report: frame format:\n" + out)
    # run.json predates keeps_alive_count and the kept-alive bytes: the
    # count is the list's length, no bytes, and the summary's one line
    check("  keeps alive 1 object the program released: cl_context 0x55d0c29f3510\n" in out,
          "report: keeps alive missing:\n" + out)
    check("  1 object released by the program but still held by live children\n" in out and
          "kept alive by leaked objects" not in out, "report: an old report's kept-alive summary:\n" + out)
    check("peak 1.20 GiB live in 3,400 objects at 512 ms" in out, "report: peak line")
    for stack in ("the call:", "created:", "released:"):
        check(stack in out, "report: misuse stack %r missing" % stack)
    # A newer report gives the bytes the leaks keep alive (a leaked mapping
    # pins the physical memory the program released): worded as in the
    # exit report, per site and in the summary.
    kept = json.load(open(json_file))
    kept["summary"] = dict(kept["summary"], kept_alive_objects=3, kept_by_leaks_objects=1,
                           kept_by_leaks_bytes=1048576)
    kept["sites"][0] = dict(kept["sites"][0], keeps_alive_count=1, keeps_alive_bytes=1048576)
    kept["sites"][1] = dict(kept["sites"][1], keeps_alive_count=0, keeps_alive_bytes=0)
    with open(work("kept_bytes.json"), "w") as out:
        json.dump(kept, out)
    out = livetrack("report", work("kept_bytes.json"), expect=0).stdout
    check("  keeps alive 1 object (1.00 MiB) the program released: cl_context 0x55d0c29f3510\n" in out,
          "report: the bytes a site keeps alive:\n" + out)
    check("  1 object (1.00 MiB) the program released is kept alive by leaked objects\n" in out and
          "  2 objects the program released are still held by suppressed objects or by calls in progress\n" in out
          and "held by live children" not in out, "report: the kept-alive summary:\n" + out)
    # 0 bytes: nothing beside the counts
    kept["summary"] = dict(kept["summary"], kept_alive_objects=1, kept_by_leaks_bytes=0)
    kept["sites"][0] = dict(kept["sites"][0], keeps_alive_bytes=0)
    with open(work("kept_bytes.json"), "w") as out:
        json.dump(kept, out)
    out = livetrack("report", work("kept_bytes.json"), expect=0).stdout
    check("  keeps alive 1 object the program released: cl_context 0x55d0c29f3510\n" in out and
          "  1 object the program released is kept alive by leaked objects\n" in out and
          "still held by" not in out, "report: kept alive, no bytes:\n" + out)

    out = livetrack("report", json_file, "--top", "1", expect=0).stdout
    check("and 1 more call site" in out and "main (leaky.c:42)" not in out, "report --top 1")
    out = livetrack("report", json_file, "--by", "type", expect=0).stdout
    check(re.search(r"OpenCL +cl_mem +3 objects +12.0 KiB", out) and "leaked at" not in out,
          "report --by type:\n" + out)
    out = livetrack("report", json_file, "--by=api", expect=0).stdout
    check(re.search(r"OpenCL +23 objects +12.0 KiB", out), "report --by api:\n" + out)
    out = livetrack("report", json_file, "--peak", expect=0).stdout
    check("3000 objects (1.20 GiB) live at setup (leaky.c:30)" in out, "report --peak:\n" + out)

    result = livetrack("diff", base, json_file, expect=1)
    check("1 new leak site" in result.stdout and "make_buffer (helpers.h:17)" in result.stdout,
          "diff base new:\n" + result.stdout)
    check("main (leaky.c:42)" not in result.stdout.split("new:")[1], "diff: the old site counted as new")
    livetrack("diff", json_file, base, expect=0)
    livetrack("diff", json_file, json_file, expect=0)

    # A damaged report never passes for one without leaks: each command
    # refuses it (2) with one line saying what is wrong; sites that do not
    # add up to the summary are read with a warning.
    whole = json.load(open(json_file))
    damaged = {
        "no_sites": (dict((k, v) for k, v in whole.items() if k != "sites"), '"sites" is missing or not an array'),
        "sites_object": (dict(whole, sites={"0": whole["sites"][0]}), '"sites" is missing or not an array'),
        "objects_text": (dict(whole, sites=[dict(s, objects=str(s["objects"])) for s in whole["sites"]]),
                         'site 1: "objects" is missing or not a count'),
        "negative_bytes": (dict(whole, sites=[dict(s, bytes=-1) for s in whole["sites"]]),
                           'site 1: "bytes" is missing or not a count'),
        # read as 0 objects, it made diff pass
        "objects_past_int64": (dict(whole, sites=[dict(s, objects=2 ** 63 + 5) for s in whole["sites"]]),
                               'site 1: "objects" is missing or not a count'),
        "no_summary": (dict((k, v) for k, v in whole.items() if k != "summary"),
                       '"summary" is missing or not an object'),
    }
    # the peak's sites are counts too: pprof --set peak made 2^64 - 5 of a -5
    peak_damaged = json.loads(json.dumps(whole))
    peak_damaged["peak"]["sites"][0]["types"][0]["objects"] = -5
    damaged["peak_negative_type"] = (peak_damaged, "peak site 1: a type's \"objects\" or \"bytes\" is not a count")
    peak_damaged = json.loads(json.dumps(whole))
    peak_damaged["peak"]["sites"][0]["objects"] = 1.5e300
    damaged["peak_huge_objects"] = (peak_damaged, 'peak site 1: "objects" is missing or not a count')
    for name, (document, problem) in damaged.items():
        with open(work(name + ".json"), "w") as out:
            json.dump(document, out)
        for argv in (["diff", base, work(name + ".json")], ["report", work(name + ".json")],
                     ["pprof", work(name + ".json"), "-o", work(name + ".pb.gz")]):
            result = livetrack(*argv, expect=2)
            check(result.stderr.count("\n") == 1 and problem in result.stderr,
                  "livetrack %s on a damaged report: %r" % (argv[0], result.stderr))
    # Names are shown as text, never as terminal commands: escape sequences
    # (C0 and C1 controls) in a report read from anywhere come out as '?'.
    hostile = json.loads(json.dumps(whole))
    hostile["sites"][0]["frames"][0]["function"] = "main\u001b]0;pwned\u0007\u001b[2J\u009b31m"
    hostile["sites"][0]["types"][0]["type"] = "cl_mem\nlivetrack: 0 leaks"
    with open(work("hostile.json"), "w") as out:
        json.dump(hostile, out)
    for argv in (["report", work("hostile.json")], ["diff", base, work("hostile.json")]):
        out = livetrack(*argv).stdout
        check("main?]0;pwned??[2J??31m" in out and not re.search("[\x00-\x09\x0b-\x1f\x7f\x80-\x9f]", out) and
              "\nlivetrack: 0 leaks" not in out, "livetrack %s printed control characters: %r" % (argv[0], out))
    # A report livetrack had no memory to make: its leaks are not known,
    # not none. report says so; diff refuses to compare either way round.
    unknown = dict(whole, sites=[], objects=[],
                   summary=dict(whole["summary"], leaked_objects=0, leaked_bytes=0, live_objects=1500,
                                leaks_known=False))
    with open(work("unknown.json"), "w") as out:
        json.dump(unknown, out)
    result = livetrack("report", work("unknown.json"), expect=0)
    check("leaked objects not known: 1500 objects were live" in result.stdout and
          "which of its 1500 live objects leaked is not known" in result.stderr,
          "report of a report whose leaks are not known:\n" + result.stdout + result.stderr)
    for pair in ((base, work("unknown.json")), (work("unknown.json"), base)):
        result = livetrack("diff", *pair, expect=2)
        check("its leaks are not known" in result.stderr, "diff with leaks not known: %r" % result.stderr)
    cut = dict(whole, sites=whole["sites"][1:])
    with open(work("cut.json"), "w") as out:
        json.dump(cut, out)
    listed = sum(s["objects"] for s in cut["sites"] if not s["suppressed"])
    result = livetrack("report", work("cut.json"), expect=0)
    check("its sites list %d leaked objects where its summary counts 23" % listed in result.stderr,
          "report of a cut file: no warning: %r" % result.stderr)
    livetrack("diff", "--ignore-lines", base, json_file, expect=1)
    check_diff_moved_sources(base, json_file)
    # Sites that differ only in their line are one site with --ignore-lines:
    # its objects and its types are those of both.
    two_lines = json.load(open(json_file))
    first = two_lines["sites"][0]
    frames = [dict(first["frames"][0], line=first["frames"][0]["line"] + 1)] + first["frames"][1:]
    twin = dict(first, id=first["id"] + 1000, objects=3, bytes=96, frames=frames,
                types=[{"api": "OpenCL", "type": "cl_mem", "objects": 3, "bytes": 96}])
    two_lines["sites"] = [first, twin]
    two_lines["summary"] = dict(two_lines["summary"], leaked_objects=first["objects"] + 3)
    with open(work("two_lines.json"), "w") as out:
        json.dump(two_lines, out)
    out = livetrack("diff", "--ignore-lines", work("empty.json"), work("two_lines.json"), expect=1).stdout
    check("new: %d objects" % (first["objects"] + 3) in out and "cl_event x%d, cl_mem x3" % first["objects"] in out,
          "diff --ignore-lines: the merged site's types:\n" + out)

    trace = check_trace(livetrack("trace", csv_file, json_file, "-o", work("fixture.trace.json"), expect=0) and
                        work("fixture.trace.json"), leaks=3, misuse=1,
                        types=("OpenCL cl_mem", "OpenCL cl_event", "VmRSS", "VmSize"))
    misuse = [e for e in trace["traceEvents"] if e["name"].startswith("misuse:")][0]
    check("already released" in misuse["args"].get("message", ""), "trace: misuse without the report's message")
    check(all(e.get("ts", 0) <= 12000 for e in trace["traceEvents"] if e["ph"] == "C"),
          "trace: the partial last row was read")
    check(trace["traceEvents"][0]["pid"] == 4242, "trace: pid not from the report")
    check_trace(livetrack("trace", csv_file, "-o", work("fixture-nojson.trace.json"), expect=0) and
                work("fixture-nojson.trace.json"), leaks=0, misuse=1)
    out = livetrack("trace", csv_file, "-o", "-", expect=0).stdout
    check(json.loads(out)["traceEvents"], "trace -o - is not JSON")

    livetrack("pprof", json_file, "-o", work("fixture.pb.gz"), expect=0)
    profile = check_pprof.decode(work("fixture.pb.gz"))
    check(profile["sample_types"] == [("objects", "count"), ("bytes", "bytes")], "pprof sample types")
    check(sum(s["values"][0] for s in profile["samples"]) == 23, "pprof: leaked objects")
    check(sum(s["values"][1] for s in profile["samples"]) == 12288, "pprof: leaked bytes")
    inlined = [s for s in profile["samples"] if s["labels"].get("type") == "cl_mem"][0]["stack"][0]
    check([f for f, _, _ in inlined] == ["make_buffer", "setup"], "pprof: inlined frames not in one location")
    livetrack("pprof", json_file, "--set", "peak", "-o", work("fixture-peak.pb.gz"), expect=0)
    peak = check_pprof.decode(work("fixture-peak.pb.gz"))
    check(sum(s["values"][0] for s in peak["samples"]) == 3400, "pprof --set peak: objects")

    livetrack("plot", csv_file, json_file, "-o", work("fixture.html"), expect=0)
    html = check_html(work("fixture.html"))
    check("peak 8.00 MiB at 4.5 ms" in html, "plot: the bytes peak is not marked")
    check("make_buffer (helpers.h:17)" in html and "third_party_init" not in html, "plot: sites")
    # the leak card: a report older than 0.3.1 gives the kept-alive count only, a newer one what leaks pin
    check("12.0 KiB; 1 kept alive, 2 suppressed" in html, "plot: the leak card of an older report")
    kept = json.load(open(json_file))
    kept["summary"].update(kept_by_leaks_objects=1, kept_by_leaks_bytes=4096)
    with open(work("kept.json"), "w") as out:
        json.dump(kept, out)
    livetrack("plot", csv_file, work("kept.json"), "-o", work("kept.html"), expect=0)
    check("12.0 KiB; 1 kept alive by leaks (4.00 KiB), 2 suppressed" in check_html(work("kept.html")),
          "plot: the leak card does not say what the leaks keep alive")
    # sites listed smallest first (an edited report): drawn and listed largest first, ties in the report's order
    many = json.load(open(json_file))
    template = next(site for site in many["sites"] if not site.get("suppressed"))
    many["sites"] = [dict(template, id=i + 1, objects=1 + i % 7, bytes=(i // 2) * 64,
                          frames=[dict(template["frames"][0], function="site_%05d" % i)]) for i in range(3000)]
    many["summary"]["leaked_objects"] = sum(site["objects"] for site in many["sites"])
    with open(work("ascending.json"), "w") as out:
        json.dump(many, out)
    livetrack("plot", csv_file, work("ascending.json"), "-o", work("ascending.html"), expect=0)
    listed = re.findall(r"<summary><b>(site_\d+)", check_html(work("ascending.html")))
    wanted = sorted(many["sites"], key=lambda site: (-site["bytes"], -site["objects"], site["id"]))
    check(listed == [site["frames"][0]["function"] for site in wanted],
          "plot of sites in ascending order: listed %s..." % listed[:6])
    # either order of the inputs
    livetrack("plot", json_file, csv_file, "-o", work("fixture2.html"), expect=0)
    livetrack("plot", csv_file, "-o", work("fixture-nojson.html"), expect=0)
    check_html(work("fixture-nojson.html"), with_json=False)
    livetrack("plot", csv_file, "-o", work("fixture.svg"), expect=0)
    check_svg(work("fixture.svg"))
    # "-" is standard input, as for trace and report: the timeline, unless
    # the other file given is the timeline
    livetrack("plot", "-", "-o", work("stdin-nojson.html"), expect=0, stdin_path=csv_file)
    page = check_html(work("stdin-nojson.html"), with_json=False)
    check("<title>livetrack: standard input</title>" in page and "from standard input (" in page,
          "plot - names standard input \"-\": " + re.findall(r"<title>.*?</title>", page)[0])
    livetrack("plot", "-", json_file, "-o", work("stdin-csv.html"), expect=0, stdin_path=csv_file)
    livetrack("plot", csv_file, "-", "-o", work("stdin-json.html"), expect=0, stdin_path=json_file)
    for name in ("stdin-csv.html", "stdin-json.html"):
        check("make_buffer (helpers.h:17)" in check_html(work(name)), "plot with - as one input: no sites in " + name)
    result = livetrack("plot", "-", "-", "-o", work("x.html"), expect=2, stdin_path=csv_file)
    check("given twice" in result.stderr, "plot - -: %r" % result.stderr)
    check_plot_of_pipes(csv_file, json_file)

    # A broken report and a broken timeline: one line, exit status 2.
    text = open(json_file).read()
    open(work("truncated.json"), "w").write(text[: len(text) // 2])
    result = livetrack("report", work("truncated.json"), expect=2)
    check("not valid JSON" in result.stderr, "truncated JSON: " + result.stderr)
    # The program's output, then the report: what LIVETRACK_JSON=/dev/stdout
    # with ./app >out.txt writes. Its lines (one starting with '{' too) are
    # skipped by every reader of reports, from a file or read once from a
    # pipe; a document cut after them is still said to be broken.
    after_output = "program line 1\n{progress} 50%\n\n" + text
    open(work("after-output.json"), "w").write(after_output)
    out = livetrack("report", work("after-output.json"), expect=0).stdout
    check("23 leaked objects" in out, "report of a file with the program's lines first:\n" + out[:500])
    # through a pipe, which can be read only once
    for command in (["report", "-"], ["plot", csv_file, "-", "-o", work("after-output-pipe.html")]):
        result = subprocess.run([args.livetrack] + command, input=after_output.encode(), capture_output=True,
                                timeout=60)
        check(result.returncode == 0, "%s - of a pipe with the program's lines first: %d: %s"
              % (command[0], result.returncode, result.stderr.decode()))
    livetrack("diff", json_file, work("after-output.json"), expect=0)
    livetrack("trace", csv_file, work("after-output.json"), "-o", work("after-output.trace.json"), expect=0)
    check_trace(work("after-output.trace.json"), leaks=3, misuse=1)
    livetrack("pprof", work("after-output.json"), "-o", work("after-output.pb"), expect=0)
    # plot tells a report by its first byte or a .json name; "-" is the report beside a timeline
    for name, inputs, stdin_path in (("after-output.html", [csv_file, work("after-output.json")], None),
                                     ("after-output-stdin.html", [csv_file, "-"], work("after-output.json"))):
        livetrack("plot", *inputs, "-o", work(name), expect=0, stdin_path=stdin_path)
        check("make_buffer (helpers.h:17)" in check_html(work(name)), "plot of a report after output: " + name)
    open(work("after-output-cut.json"), "w").write("program line 1\n" + text[: len(text) // 2])
    result = livetrack("report", work("after-output-cut.json"), expect=2)
    check("not valid JSON" in result.stderr and "counted from the file's line 2" in result.stderr,
          "truncated JSON after the program's lines: " + result.stderr)
    # The program's output alone (its report went elsewhere): unreadable, exit 2
    open(work("output-only.json"), "w").write("program line 1\nprogress 50%\ndone\n")
    for command in (["report", work("output-only.json")], ["diff", json_file, work("output-only.json")],
                    ["pprof", work("output-only.json"), "-o", work("output-only.pb")]):
        result = livetrack(*command, expect=2)
        check("no line of it starts with '{' (the program's output alone" in result.stderr,
              "%s of the program's output alone: %s" % (command[0], result.stderr))
    open(work("output-only-brace.json"), "w").write("program line 1\n{progress} 50%\ndone\n")
    result = livetrack("report", work("output-only-brace.json"), expect=2)
    check("not valid JSON" in result.stderr and "counted from the file's line 2" in result.stderr,
          "the program's output alone, a line starting with '{': " + result.stderr)
    # A time no clock gives (1e999 reads as infinite) is damage: trace
    # wrote it into its JSON as "inf", pprof converted it out of range.
    broken = json.loads(text)
    broken["objects"][0]["time_ms"] = 1e400
    open(work("inf-time.json"), "w").write(json.dumps(broken).replace("Infinity", "1e999"))
    for command in (["report", work("inf-time.json")],
                    ["trace", csv_file, work("inf-time.json"), "-o", work("inf-time.trace.json")],
                    ["pprof", work("inf-time.json"), "-o", work("inf-time.pb")]):
        result = livetrack(*command, expect=2)
        check('objects 1: "time_ms" is not a time' in result.stderr,
              "%s: infinite time taken:\n%s" % (command[0], result.stderr))
    # A type's count below zero is damage (pprof made a negative sample of it)
    negative = json.loads(text)
    negative["sites"][0]["types"][0]["objects"] = -5
    open(work("negative-type.json"), "w").write(json.dumps(negative))
    result = livetrack("pprof", work("negative-type.json"), "-o", work("negative-type.pb"), expect=2)
    check("a type's \"objects\" or \"bytes\" is not a count" in result.stderr, "negative type count: " + result.stderr)
    # C++ template names run to kilobytes and may differ only at the end:
    # cut, two sites printed alike and pprof merged their functions.
    long_names = json.loads(text)
    template_name = "void run<" + ", ".join(["Kokkos::View<double***, Kokkos::LayoutRight>"] * 40)
    for site, functor in zip(long_names["sites"][:2], ("FunctorA", "FunctorB")):
        site["frames"][0]["function"] = template_name + ", " + functor + ">::execute()"
    open(work("long-names.json"), "w").write(json.dumps(long_names))
    result = livetrack("report", work("long-names.json"), expect=0)
    check(all(functor + ">::execute()" in result.stdout for functor in ("FunctorA", "FunctorB")),
          "report: long function names cut:\n" + result.stdout[:3000])
    livetrack("pprof", work("long-names.json"), "-o", work("long-names.pb"), expect=0)
    names = {function for sample in check_pprof.decode(work("long-names.pb"))["samples"]
             for location in sample["stack"] for function, _, _ in location}
    check(sum(name.startswith(template_name) for name in names) == 2,
          "pprof: two long function names merged: %r" % sorted(n[-30:] for n in names))
    open(work("other.json"), "w").write('{"schema": "something-else"}')
    check("not a livetrack JSON report" in livetrack("report", work("other.json"), expect=2).stderr, "foreign JSON")
    open(work("newer.json"), "w").write(text.replace('"version":1', '"version":2', 1))
    result = livetrack("report", work("newer.json"), expect=0)
    check("newer" in result.stderr, "a newer version is not mentioned")
    lines = open(csv_file).read().splitlines(True)
    open(work("bad-row.csv"), "w").write("".join(lines[:5] + ["garbage,row\n"] + lines[5:-1]))
    result = livetrack("plot", work("bad-row.csv"), "-o", work("bad-row.html"), expect=0)
    check("malformed row" in result.stderr, "bad row not reported: " + result.stderr)
    # Said as it is: a directory, an empty report named .json (not "two
    # CSV files"), and a timeline saved with a byte-order mark is read.
    os.makedirs(work("a-directory"), exist_ok=True)
    for command in (["report", work("a-directory")], ["trace", work("a-directory"), "-o", work("dir.trace.json")]):
        result = livetrack(*command, expect=2)
        check("Is a directory" in result.stderr, "%s of a directory: %s" % (command[0], result.stderr))
    open(work("zero-bytes.json"), "w").close()
    result = livetrack("plot", csv_file, work("zero-bytes.json"), "-o", work("zero-bytes.html"), expect=2)
    check("two CSV files" not in result.stderr and "zero-bytes.json" in result.stderr,
          "plot with an empty report: " + result.stderr)
    # ... and a damaged one that does not start with '{' (cut, or not an object)
    for name, text in (("array.json", "[]"), ("null.json", "null\n"), ("cut.json", '"version":1,')):
        open(work(name), "w").write(text)
        result = livetrack("plot", csv_file, work(name), "-o", work(name + ".html"), expect=2)
        check("two CSV files" not in result.stderr and name in result.stderr,
              "plot with a damaged report %s: %s" % (name, result.stderr))
    open(work("bom.csv"), "w", encoding="utf-8-sig").write(open(csv_file).read())
    livetrack("trace", work("bom.csv"), "-o", work("bom.trace.json"), expect=0)
    # A newer writer's extra columns, many of them before the known ones
    extra = ",".join("x%d" % i for i in range(100))
    wide = [extra + "," + line.rstrip("\n") for line in open(csv_file) if line.endswith("\n")]  # not the cut row
    wide = [wide[0]] + [",".join(["0"] * 100) + line[len(extra):] for line in wide[1:]]
    open(work("wide.csv"), "w").write("\n".join(wide) + "\n")
    result = livetrack("trace", work("wide.csv"), "-o", work("wide.trace.json"), expect=0)
    check("malformed" not in result.stderr, "a timeline with 100 more columns: " + result.stderr)
    # A stray quote opens a field that never closes: the rows after it are
    # rows still, and only the damaged one is left out.
    header = "seq,time_ms,event,call,api,type,handle,live_objects,live_bytes\n"
    rows = ["%d,%d.000,create,makeX,user,object,0x%x,%d,0\n" % (i, i, 0x1000 * i, i) for i in range(1, 7)]
    rows[1] = rows[1].replace("makeX", '"makeX')
    for name, tail in (("stray-quote.csv", ""), ("stray-quote-cut.csv", "7,7.000,create,makeX,user,object,0x7000,6")):
        open(work(name), "w").write(header + "".join(rows) + tail)
        result = livetrack("trace", work(name), "-o", work(name + ".json"), expect=0)
        events = json.load(open(work(name + ".json")))["traceEvents"]
        counted = [e for e in events if e["ph"] == "C" and e["name"] == "live objects (all types)"]
        check("left out 1 malformed row (the first on line 3)" in result.stderr and len(counted) == 5,
              "%s: rows after a stray quote lost (%d kept):\n%s" % (name, len(counted), result.stderr))
    # A quote inside a field is an ordinary character (only a field's first
    # one opens quotes): no row is joined to the next, even where the joined
    # lines would land in columns the reader does not use.
    full_header = ("seq,time_ms,event,call,api,type,handle,bytes,type_live,live_objects,live_bytes,vm_size_kb,"
                   "vm_rss_kb,vm_data_kb,vm_peak_kb,threads,d_vm_size_kb,d_vm_rss_kb,d_vm_data_kb,d_vm_peak_kb,"
                   "d_threads\n")
    rows = ["%d,%d.000,create,makeX,user,object,0x%x,8,%d,%d,%d,100,50,40,120,1,0,0,0,0,0\n" % (i, i, 0x1000 * i, i, i,
                                                                                          8 * i) for i in range(1, 7)]
    rows[1] = rows[1].replace("makeX", 'ma"keX')
    open(work("mid-quote.csv"), "w").write(full_header + "".join(rows))
    result = livetrack("trace", work("mid-quote.csv"), "-o", work("mid-quote.json"), expect=0)
    events = json.load(open(work("mid-quote.json")))["traceEvents"]
    counted = [e for e in events if e["ph"] == "C" and e["name"] == "live objects (all types)"]
    check(len(counted) == 6 and "malformed" not in result.stderr,
          "a quote inside a name: %d rows of 6 read:\n%s" % (len(counted), result.stderr))

    # Misuse rows get the report's message for that very call. A record's seq
    # counts creations, a row's seq counts rows: they are matched on the
    # record's timeline_row, or, in reports older than it, by handle in order.
    open(work("misuse.csv"), "w").write(
        "seq,time_ms,event,call,api,type,handle,live_objects,live_bytes\n"
        "1,1.000,create,makeX,user,object,0x1000,1,0\n"
        "2,1.100,misuse,firstBad,user,,0xdead,1,0\n"
        "3,2.000,create,makeY,user,object,0x2000,2,0\n"
        "4,2.100,misuse,secondBad,user,,0xbeef,2,0\n")
    report = json.load(open(json_file))
    template = report["misuse"][0]
    report["misuse"] = [dict(template, seq=1, timeline_row=2, time_ms=1.1, handle="0xdead",
                             message="firstBad(0xdead): message ONE"),
                        dict(template, seq=2, timeline_row=4, time_ms=2.1, handle="0xbeef",
                             message="secondBad(0xbeef): message TWO")]
    json.dump(report, open(work("misuse.json"), "w"))
    for record in report["misuse"]:
        del record["timeline_row"]
    json.dump(report, open(work("misuse-older.json"), "w"))
    for name in ("misuse.json", "misuse-older.json"):
        livetrack("trace", work("misuse.csv"), work(name), "-o", work(name + ".trace.json"), expect=0)
        events = json.load(open(work(name + ".trace.json")))["traceEvents"]
        pairs = [(e["name"].split()[1], e["args"].get("message", "")) for e in events
                 if e["name"].startswith("misuse:")]
        check(len(pairs) == 2 and all(message.startswith(call + "(") for call, message in pairs),
              "trace with %s: misuse messages on the wrong rows: %r" % (name, pairs))
    # A call named with a control character or bytes that are not UTF-8
    # (a hand-made or foreign timeline): the report holds it, in the
    # message, as '?' and U+FFFD; the row still gets its record.
    open(work("odd-call.csv"), "wb").write(
        b"seq,time_ms,event,call,api,type,handle,live_objects,live_bytes\n"
        b"1,1.000,create,makeX,user,object,0x1000,1,0\n"
        b"2,1.100,misuse,bad\x01call,user,,0xdead,1,0\n"
        b"3,2.100,misuse,bad\xffcall,user,,0xbeef,1,0\n")
    report["misuse"] = [dict(template, seq=1, timeline_row=2, time_ms=1.1, handle="0xdead",
                             message="bad\u0001call(0xdead): message ONE"),
                        dict(template, seq=1, timeline_row=3, time_ms=2.1, handle="0xbeef",
                             message="bad\ufffdcall(0xbeef): message TWO")]
    json.dump(report, open(work("odd-call.json"), "w"))
    livetrack("trace", work("odd-call.csv"), work("odd-call.json"), "-o", work("odd-call.trace.json"), expect=0)
    events = json.load(open(work("odd-call.trace.json"), encoding="utf-8", errors="replace"))["traceEvents"]
    messages = [e["args"].get("message", "") for e in events if e["name"].startswith("misuse:")]
    check(len(messages) == 2 and messages[0].endswith("message ONE") and messages[1].endswith("message TWO"),
          "trace: misuse rows of odd call names without their records: %r" % messages)
    # A forked child without %p appends to its parent's timeline, counting
    # rows of its own: row numbers repeat, and the parent's report must not
    # lend its record to the child's row of the same number (same handle:
    # the child's are copies of the parent's).
    open(work("forked.csv"), "w").write(
        "seq,time_ms,event,call,api,type,handle,live_objects,live_bytes\n"
        "1,1.000,create,makeX,user,object,0x1000,1,0\n"
        "2,1.500,misuse,childBad,user,object,0xdead,1,0\n"
        "2,2.000,misuse,parentBad,user,object,0xdead,1,0\n")
    report["misuse"] = [dict(template, seq=1, timeline_row=2, time_ms=2.0, handle="0xdead",
                             message="parentBad(0xdead): the parent's message")]
    json.dump(report, open(work("forked.json"), "w"))
    livetrack("trace", work("forked.csv"), work("forked.json"), "-o", work("forked.trace.json"), expect=0)
    events = json.load(open(work("forked.trace.json")))["traceEvents"]
    pairs = [(e["name"].split()[1], e["args"].get("message", "")) for e in events if e["name"].startswith("misuse:")]
    check(pairs == [("childBad", ""), ("parentBad", "parentBad(0xdead): the parent's message")],
          "trace of a shared timeline: a record on another process's row: %r" % pairs)

    # No rows at all: nothing to sort (qsort(NULL, 0) once failed under UBSan).
    open(work("header-only.csv"), "w").write(lines[0])
    livetrack("plot", work("header-only.csv"), "-o", work("header-only.html"), expect=0)
    livetrack("trace", work("header-only.csv"), "-o", work("header-only.trace.json"), expect=0)
    # A Latin-1 type name: the SVG stays well-formed XML (U+FFFD in its place).
    row = lines[1].split(",")
    latin1 = ",".join(row[:5] + ["caf\xe9_t"] + row[6:]).encode("latin-1")
    open(work("latin1.csv"), "wb").write(lines[0].encode() + latin1)
    livetrack("plot", work("latin1.csv"), "-o", work("latin1.svg"), expect=0)
    svg = check_svg(work("latin1.svg"))
    check(svg is not None and "caf\ufffd_t" in open(work("latin1.svg"), encoding="utf-8").read(),
          "plot: the Latin-1 name is not U+FFFD")
    # Times that are not numbers a clock gives: left out with a message, and
    # the trace stays JSON (no "ts":nan).
    bad_times = ["%s,%s,%s" % (r.split(",", 2)[0], t, r.split(",", 2)[2])
                 for r, t in zip(lines[1:5], ("nan", "inf", "-inf", "1e308"))]
    open(work("bad-times.csv"), "w").write(lines[0] + "".join(bad_times) + "".join(lines[5:-1]))
    result = livetrack("trace", work("bad-times.csv"), "-o", work("bad-times.trace.json"), expect=0)
    check("left out 4 malformed rows" in result.stderr, "bad times not reported: " + result.stderr)

    def no_constants(name):
        raise ValueError("not JSON: " + name)
    try:
        json.loads(open(work("bad-times.trace.json")).read(), parse_constant=no_constants)
    except ValueError as error:
        check(False, "trace of bad times: %s" % error)
    # Counts and kB no process reaches (the RSS in kB x 1024, a type's live
    # count past the next row's, their sums): rows left out with a
    # message, never an overflow (UBSan stops the ASan build at one) or a
    # negative byte count in the trace.
    columns = lines[0].strip().split(",")
    extreme = []
    for column, value in (("vm_rss_kb", 10 ** 16), ("type_live", 2 ** 63 - 1), ("d_vm_rss_kb", -2 ** 63)):
        row = lines[3].strip().split(",")
        row[columns.index(column)] = str(value)
        extreme.append(",".join(row) + "\n")
    open(work("extreme.csv"), "w").write(lines[0] + "".join(lines[1:3]) + "".join(extreme) + "".join(lines[3:]))
    result = livetrack("trace", work("extreme.csv"), "-o", work("extreme.trace.json"), expect=0)
    check("left out 3 malformed rows" in result.stderr, "extreme values not reported: " + result.stderr)
    check('"bytes":-' not in open(work("extreme.trace.json")).read(), "trace: a negative byte count")
    result = livetrack("plot", work("extreme.csv"), "-o", work("extreme.html"), expect=0)
    check("left out 3 malformed rows" in result.stderr, "plot: extreme values not reported: " + result.stderr)


def case_downsample():
    """Tens of thousands of rows: the charts are downsampled, visibly, and keep the peak."""
    columns = ("seq,time_ms,event,call,api,type,handle,bytes,type_live,live_objects,live_bytes,vm_size_kb,"
               "vm_rss_kb,vm_data_kb,vm_peak_kb,threads,d_vm_size_kb,d_vm_rss_kb,d_vm_data_kb,d_vm_peak_kb,d_threads")
    rows, live, live_bytes, seq, spike_at = [], 0, 0, 0, 31337
    for i in range(60000):
        for event in ("create", "release"):
            seq += 1
            size = (1 << 30) if i == spike_at else 4096
            live += 1 if event == "create" else -1
            live_bytes += size if event == "create" else -size
            rows.append("%d,%.3f,%s,clCreateBuffer,OpenCL,cl_mem,0x%x,%d,%d,%d,%d,400000,%d,300000,400000,4,0,%d,0,0,0"
                        % (seq, seq * 0.01, event, i, size, live, live, live_bytes, 100000 + i % 7, i % 7 - 3))
    open(work("big.csv"), "w").write(columns + "\n" + "\n".join(rows) + "\n")
    livetrack("plot", work("big.csv"), "-o", work("big.html"), expect=0)
    html = check_html(work("big.html"), with_json=False)
    check("Downsampled" in html, "big timeline: downsampling not said")
    check("peak 1.00 GiB at 627 ms" in html, "big timeline: the peak is lost: %s" % re.findall(r"peak [^<]*", html))
    check(os.path.getsize(work("big.html")) < 1_000_000, "big timeline: HTML of %d bytes" % os.path.getsize(work("big.html")))
    livetrack("plot", work("big.csv"), "-o", work("big.svg"), expect=0)
    root = check_svg(work("big.svg"))
    check(root is not None and "Downsampled" in open(work("big.svg")).read(), "big SVG: downsampling not said")
    livetrack("trace", work("big.csv"), "-o", work("big.trace.json"), expect=0)
    check_trace(work("big.trace.json"))


def armed_env():
    return {"LIVETRACK_EXIT_REPORT": "auto"}


def case_run_status():
    app = args.app
    livetrack("run", "--api", "opencl", "--", app, "--exit", "3", expect=3, env=armed_env())
    # Started with SIGCHLD ignored (as some CI agents start jobs): the
    # program's status still comes through, the run log is still read, and
    # the program inherits the ignored SIGCHLD as it would without livetrack.
    ignoring = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
                "os.execv(sys.argv[1], sys.argv[1:])", args.livetrack, "run"]
    run(ignoring + ["--", app, "--exit", "3"], expect=3, env=armed_env())
    run(ignoring + ["--fail-on-leak", "--", app, "--leak", "2"], expect=1, env=armed_env())
    shown = run(ignoring + ["--", "grep", "SigIgn", "/proc/self/status"], expect=0, env=armed_env()).stdout
    ignored_mask = int(shown.split()[-1], 16) if shown.startswith("SigIgn:") else 0
    check(ignored_mask & (1 << (signal.SIGCHLD - 1)), "run: the program did not inherit an ignored SIGCHLD: " + shown)
    livetrack("run", "--", app, "--leak", "0", expect=0, env=armed_env())
    livetrack("run", "--", app, "--signal", "15", expect=128 + 15, env=armed_env())
    livetrack("run", "--", app, "--signal", "9", expect=128 + 9, env=armed_env())
    # SIGTERM to livetrack reaches the program, and its death is the status. Sent once the program runs (it
    # makes `started`, then becomes sleep): livetrack blocks SIGTERM before it starts the program, where a
    # SIGTERM that came earlier ends livetrack itself, however long a loaded host takes to get there.
    started = work("sigterm.started")
    if os.path.exists(started):
        os.remove(started)
    process = subprocess.Popen([args.livetrack, "run", "--api", "opencl", "--", "/bin/sh", "-c",
                                ': > "$0" && exec sleep 30', started])
    deadline = time.monotonic() + 30
    while not os.path.exists(started) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    check(os.path.exists(started), "run: the program did not start within 30 s: status %s" % process.poll())
    process.terminate()
    check(process.wait(timeout=30) == 128 + 15, "SIGTERM was not passed on: status %s" % process.returncode)
    # --fail-on-leak: N when something leaked, the program's status otherwise
    livetrack("run", "--fail-on-leak=7", "--", app, "--leak", "2", expect=7, env=armed_env())
    # no descriptors left for livetrack's own pipe: 125, as any other failure to start the program
    result = run(["/bin/sh", "-c", 'ulimit -n 4; exec "$0" run -- /bin/true', args.livetrack], env=armed_env())
    check(result.returncode == 125 and "cannot start /bin/true" in result.stderr,
          "run out of descriptors: %d\n%s" % (result.returncode, result.stderr))
    # two outputs (or an output and the suppressions) naming one file are refused; devices may be shared
    result = livetrack("run", "--json", work("same.out"), "--csv", work("same.out"), "--", app, expect=2,
                       env=armed_env())
    check("--json and --csv name the same file" in result.stderr, "run --json X --csv X:\n" + result.stderr)
    for other in (os.path.join(os.path.dirname(work("same.out")), ".", "same.out"),
                  os.path.join(work("a-directory"), "..", "same.out")):
        os.makedirs(work("a-directory"), exist_ok=True)
        result = livetrack("run", "--json", work("same.out"), "--csv", other, "--", app, expect=2, env=armed_env())
        check("name the same file" in result.stderr, "run --json X --csv %s:\n%s" % (other, result.stderr))
    # a link to a file not made yet names the file writing through it would make
    if not os.path.lexists(work("to-same.out")):
        os.symlink("same.out", work("to-same.out"))
    result = livetrack("run", "--json", work("same.out"), "--output", work("to-same.out"), "--", app, expect=2,
                       env=armed_env())
    check("name the same file" in result.stderr and not os.path.exists(work("same.out")),
          "run --json X --output link-to-X:\n" + result.stderr)
    open(work("keep.supp"), "w").write("type:cl_event\n")
    if not os.path.lexists(work("keep-link.supp")):
        os.symlink(work("keep.supp"), work("keep-link.supp"))
    result = livetrack("run", "--suppressions", work("keep.supp"), "--output", work("keep-link.supp"), "--", app,
                       expect=2, env=armed_env())
    check("--output and --suppressions name the same file" in result.stderr and
          open(work("keep.supp")).read() == "type:cl_event\n", "run --output over the suppressions:\n" + result.stderr)
    livetrack("run", "--json", "/dev/null", "--csv", "/dev/null", "--", app, "--leak", "0", expect=0, env=armed_env())
    # ... and so may the program's own stdout and stderr on one file (`>file 2>&1`): both are added to it
    both = work("both-streams.out")
    result = run(["/bin/sh", "-c", 'exec "$0" run --json /dev/stdout --output /dev/stderr -- "$1" --leak 2 >"$2" 2>&1',
                  args.livetrack, app, both], env=armed_env())
    text = open(both).read() if os.path.exists(both) else ""
    check(result.returncode == 0 and "name the same file" not in text and "leak_events" in text and
          '"leaked_objects": 2' in text, "run --json /dev/stdout --output /dev/stderr >file 2>&1: %d\n%s" %
          (result.returncode, text))
    # The program's output then its report, on one file: livetrack's own readers skip the program's lines
    after_output = work("output-then-report.out")
    result = run(["/bin/sh", "-c", 'exec "$0" run --json /dev/stdout -- "$1" --leak 2 --misuse >"$2"',
                  args.livetrack, app, after_output], expect=0, env=armed_env())
    text = open(after_output).read() if os.path.exists(after_output) else ""
    check(text.startswith("cli_app: second release returned"), "run --json /dev/stdout >file: %r" % text[:200])
    out = livetrack("report", after_output, expect=0).stdout
    check("\n  2 leaked objects" in out, "report of the program's output then its report:\n" + out[:500])
    livetrack("run", "--fail-on-leak", app, "--leak", "2", expect=1, env=armed_env())
    livetrack("run", "--fail-on-leak=7", "--", app, "--leak", "0", expect=0, env=armed_env())
    result = livetrack("run", "--", app, "--leak", "2", expect=0, env=armed_env())
    check("leak_events" in result.stderr and "cli_app.c:" in result.stderr,
          "run: no leak report naming leak_events:\n" + result.stderr)
    livetrack("run", "--report", "off", "--", app, "--leak", "2", expect=0, env=armed_env())
    # --output moves the report to a file
    report = work("report.txt")
    if os.path.exists(report):
        os.remove(report)
    result = livetrack("run", "--output", report, "--", app, "--leak", "2", expect=0, env=armed_env())
    check(os.path.exists(report) and "leak_events" in open(report).read() and "leak_events" not in result.stderr,
          "run --output did not move the report")
    # a clean run writes none: the older file there is named as such
    result = livetrack("run", "--output", report, "--", app, "--leak", "0", expect=0, env=armed_env())
    check("is from an earlier run" in result.stderr, "run --output: a stale report not named:\n" + result.stderr)
    # programs that cannot be started
    check("cannot run" in livetrack("run", "--", "/nonexistent/program", expect=127).stderr, "not found")
    livetrack("run", "--", "/", expect=126)
    # arming: our layer goes before the layers already set; a JSON file
    # that the program does not write is pointed out
    result = livetrack("run", "-v", "--api", "opencl", "--json", work("never.json"), "--", "true", expect=0,
                       env={"OPENCL_LAYERS": "/opt/other/layer.so"})
    check(re.search(r"OPENCL_LAYERS=/\S*liblivetrack_cl\.so:/opt/other/layer\.so", result.stderr),
          "run -v: layer not prepended:\n" + result.stderr)
    check("LIVETRACK_JSON=" in result.stderr and "wrote no JSON file" in result.stderr, "run: missing JSON not noted")
    result = livetrack("run", "-v", "--api", "opencl", "--", "true", expect=0)
    check("LD_PRELOAD" not in result.stderr, "--api opencl armed more than OpenCL")
    # every front end armed puts the core in every process of the tree: a
    # wrapper that exits after the program, and a tool run after it, must
    # not replace its JSON, text or timeline with empty ones
    wrapped_json, wrapped_csv, wrapped_text = work("wrapped.json"), work("wrapped.csv"), work("wrapped.txt")
    for path in (wrapped_json, wrapped_csv, wrapped_text):
        if os.path.exists(path):
            os.remove(path)
    script = '"$0" --leak 2 2>/dev/null; /bin/true; exit 0'
    result = livetrack("run", "--json", wrapped_json, "--csv", wrapped_csv, "--output", wrapped_text,
                       "--report", "always", "--", "/bin/sh", "-c", script, app, expect=0, env=armed_env())
    report = json.load(open(wrapped_json)) if os.path.exists(wrapped_json) else {}
    check(report.get("process", {}).get("executable") == os.path.realpath(app) and
          report.get("summary", {}).get("leaked_objects") == 2,
          "run of a wrapper: the program's JSON was replaced: %r\n%s" % (report.get("process"), result.stderr))
    rows = open(wrapped_csv).read().splitlines() if os.path.exists(wrapped_csv) else []
    check(len(rows) > 2, "run of a wrapper: the program's timeline was replaced: %r" % rows[:3])
    text = open(wrapped_text).read() if os.path.exists(wrapped_text) else ""
    check("leak_events" in text, "run of a wrapper: the program's text report was replaced:\n" + text)
    # relative output paths are livetrack's, even when the program changes directory
    moved = work("moved")
    os.makedirs(moved, exist_ok=True)
    for name in ("rel.json", "rel.csv", "rel.txt"):
        for directory in (args.work, moved):
            if os.path.exists(os.path.join(directory, name)):
                os.remove(os.path.join(directory, name))
    merged = dict(os.environ, **armed_env())
    result = subprocess.run([args.livetrack, "run", "--json", "rel.json", "--csv", "rel.csv", "--output", "rel.txt",
                             "--", "/bin/sh", "-c", 'cd moved && exec "$0" --leak 2', app],
                            cwd=args.work, capture_output=True, text=True, env=merged, timeout=120)
    check(result.returncode == 0 and "wrote no" not in result.stderr and
          all(os.path.exists(work(name)) for name in ("rel.json", "rel.csv", "rel.txt")) and
          not any(os.path.exists(os.path.join(moved, name)) for name in ("rel.json", "rel.csv", "rel.txt")),
          "run: relative paths followed the program's cd: %s in %s, %s in %s\n%s"
          % (os.listdir(args.work), args.work, os.listdir(moved), moved, result.stderr))
    # in a directory whose name holds %p, relative outputs still go there:
    # the core expands %p in the outputs' names, not in the directory's
    odd = work("a%pb")
    os.makedirs(odd, exist_ok=True)
    for name in ("r.json", "t.csv", "o.txt"):
        if os.path.exists(os.path.join(odd, name)):
            os.remove(os.path.join(odd, name))
    result = subprocess.run([args.livetrack, "run", "--json", "r.json", "--csv", "t.csv", "--output", "o.txt",
                             "--report", "always", "--", app, "--leak", "1"],
                            cwd=odd, capture_output=True, text=True, env=merged, timeout=120)
    check(result.returncode == 0 and "wrote no" not in result.stderr and
          all(os.path.exists(os.path.join(odd, name)) for name in ("r.json", "t.csv", "o.txt")),
          "run in a directory named a%%pb: %s\n%s" % (os.listdir(odd), result.stderr))
    # so is a relative suppressions file, read at the program's exit
    with open(work("rel.supp"), "w") as supp:
        supp.write("function:leak_events\n")
    result = subprocess.run([args.livetrack, "run", "--suppressions", "rel.supp", "--fail-on-leak=7",
                             "--", "/bin/sh", "-c", 'cd moved && exec "$0" --leak 2', app],
                            cwd=args.work, capture_output=True, text=True, env=merged, timeout=120)
    check(result.returncode == 0 and "cannot read the suppressions" not in result.stderr,
          "run: a relative suppressions file followed the program's cd (status %d):\n%s"
          % (result.returncode, result.stderr))
    # "--" ends the options: it is not the value of one that lacks it
    result = livetrack("run", "--json", "--", app, "--leak", "0", expect=2)
    check("--json needs a value" in result.stderr and not os.path.exists(work("--")),
          "run --json --: not refused:\n" + result.stderr)
    # a program that uses no tracked API writes nothing, and is told so
    for path in (work("never.json"), work("never.csv")):
        if os.path.exists(path):
            os.remove(path)
    result = livetrack("run", "--json", work("never.json"), "--csv", work("never.csv"), "--", "true", expect=0)
    check(not os.path.exists(work("never.json")) and not os.path.exists(work("never.csv")),
          "run: a program that used no tracked API wrote a report")
    check("wrote no JSON file" in result.stderr and "wrote no CSV file" in result.stderr,
          "run: missing JSON and CSV not noted:\n" + result.stderr)
    # ... also when the names have %p: no process of the run wrote one
    result = livetrack("run", "--json", work("never.%p.json"), "--csv", work("never.%p.csv"), "--", "true", expect=0)
    check("wrote no JSON file" in result.stderr and "wrote no CSV file" in result.stderr,
          "run: missing %p JSON and CSV not noted:\n" + result.stderr)
    result = livetrack("run", "--json", work("some.%p.json"), "--", app, "--leak", "1", expect=0, env=armed_env())
    check("wrote no JSON file" not in result.stderr, "run: a %p JSON that was written noted as missing:\n" + result.stderr)
    # an older text report left in place says why this run wrote none
    passed_on = ["/bin/sh", "-c", '"$0" --leak 2 --signal 9; exit $?', app]
    for name, extra, program, env, cause in (
            ("off.txt", ["--report", "off"], [app, "--leak", "2"], {}, "--report off"),
            ("off-env.txt", [], [app, "--leak", "2"], {"LIVETRACK_EXIT_REPORT": "OFF"}, "--report off"),
            ("killed.txt", [], [app, "--leak", "2", "--signal", "9"], {}, "ended by signal 9"),
            ("passed-on.txt", [], passed_on, {}, "may not have exited normally"),
            ("untracked.txt", [], ["true"], {}, "no process of the run reported"),
            ("killed-in-script.txt", [], ["/bin/sh", "-c", '"$0" --leak 2 --signal 9; exit 0', app], {},
             "may not have exited normally"),
            ("clean.txt", [], [app, "--leak", "0"], {}, "nothing leaked")):
        with open(work(name), "w") as old:
            old.write("an earlier run's report\n")
        os.utime(work(name), (1, 1))
        result = livetrack("run", "--output", work(name), *extra, "--", *program, env=dict(armed_env(), **env))
        note = [line for line in result.stderr.splitlines() if "is from an earlier run" in line]
        check(note and cause in note[0] and (cause == "nothing leaked" or "nothing leaked" not in note[0]),
              "run: the note on an older %s does not say why:\n%s" % (name, result.stderr))
    # ... but livetrack run's own stdout or stderr, on a file, holds no report of an earlier run
    for stream, redirect in (("/dev/stdout", '>>"$2"'), ("/dev/stderr", '2>>"$2"')):
        own = work("own-stream.txt")
        with open(own, "w") as old:
            old.write("the caller's earlier line\n")
        os.utime(own, (1, 1))
        result = run(["/bin/sh", "-c", 'exec "$0" run --output %s -- "$1" --leak 0 %s' % (stream, redirect),
                      args.livetrack, app, own], expect=0, env=armed_env())
        text = open(own).read()
        check("earlier run" not in result.stderr + text and text.startswith("the caller's earlier line\n"),
              "run --output %s to a file: called an earlier run's report:\n%s%s" % (stream, result.stderr, text))
    # a program built with AddressSanitizer runs, though the front ends are
    # preloaded ahead of its runtime: ASan is told so through its own
    # option, which other programs ignore (a runtime added to LD_PRELOAD
    # would reach every process the program starts); a runtime the caller
    # preloaded stays first
    if args.asan_app:
        asan_env = dict(armed_env(), ASAN_OPTIONS="detect_leaks=0")
        result = livetrack("run", "-v", "--", args.asan_app, "--leak", "1", expect=0, env=asan_env)
        check("total: 1 leaked object" in result.stderr and "does not come first" not in result.stderr,
              "run of an ASan program:\n" + result.stderr)
        preloads = [line for line in result.stderr.splitlines() if "LD_PRELOAD=" in line]
        check(not any("libasan" in line for line in preloads), "run of an ASan program: its runtime preloaded:\n" +
              result.stderr)
        linked = subprocess.run(["ldd", args.asan_app], capture_output=True, text=True).stdout
        runtime = re.search(r"^\s*(libasan\.so\.\d+) =>", linked, re.M)
        if runtime:  # linked dynamically (gcc's default; clang links it statically)
            check("ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0" in result.stderr,
                  "run of an ASan program: ASan not told of the preloaded front ends:\n" + result.stderr)
            wrapper = '"$0" --leak 1'
            result = livetrack("run", "-v", "--", "/bin/sh", "-c", wrapper, args.asan_app, expect=0,
                               env=dict(asan_env, LD_PRELOAD=runtime.group(1)))
            check("total: 1 leaked object" in result.stderr and "does not come first" not in result.stderr and
                  "LD_PRELOAD=%s " % runtime.group(1) in result.stderr,
                  "run of a script running an ASan program, the runtime preloaded:\n" + result.stderr)
            # found as execvp finds it: past a directory of that name, and an
            # empty PATH entry is the working directory
            shadow = work("shadow")
            os.makedirs(os.path.join(shadow, os.path.basename(args.asan_app)), exist_ok=True)
            result = livetrack("run", "-v", "--", os.path.basename(args.asan_app), "--leak", "0", expect=0,
                               env=dict(asan_env, PATH="%s:%s:/usr/bin:/bin" % (shadow, os.path.dirname(args.asan_app))))
            check("verify_asan_link_order=0" in result.stderr,
                  "run of an ASan program behind a directory of its name in PATH:\n" + result.stderr)
            result = subprocess.run([args.livetrack, "run", "-v", "--", os.path.basename(args.asan_app), "--leak", "0"],
                                    cwd=os.path.dirname(args.asan_app), capture_output=True, text=True, timeout=120,
                                    env=dict(os.environ, **asan_env, PATH=":/usr/bin:/bin"))
            check(result.returncode == 0 and "verify_asan_link_order=0" in result.stderr,
                  "run of an ASan program found through an empty PATH entry:\n" + result.stderr)
    # a FIFO given as the program is refused as exec refuses it, without
    # blocking on it first
    fifo = work("fifo-program")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    os.chmod(fifo, 0o755)
    try:
        livetrack("run", "--", fifo, expect=126, timeout=30)
    except subprocess.TimeoutExpired:
        check(False, "run of a FIFO: livetrack blocked on it")
    # options after the program are the program's
    livetrack("run", "--", app, "--exit", "5", "--leak", "0", expect=5)
    livetrack("run", app, "--exit", "6", expect=6)


def check_suppressions_through_pipes(app, env):
    """--suppressions from a pipe (<(...)) or a FIFO: each process of the
    tree reads the suppressions at its exit, so run reads such a file once
    and gives every process a private copy. Read by each process itself,
    the pipe's patterns went to the first process only (the second's leaks
    counted), and a FIFO held the second at its exit for ever."""
    patterns = b"# the leaks cli_app makes\nfunction:leak_events\n"
    script = '"$0" --leak 2; "$0" --leak 2'
    merged = dict(os.environ, **env)
    fifo = work("supp.fifo")
    for kind in ("pipe", "fifo"):
        if kind == "pipe":
            read_end, write_end = os.pipe()
            feed_pipe(write_end, patterns)
            path, fds = "/dev/fd/%d" % read_end, (read_end,)
        else:
            if os.path.exists(fifo):
                os.unlink(fifo)
            os.mkfifo(fifo)
            feed_pipe(fifo, patterns)
            path, fds = fifo, ()
        command = [args.livetrack, "run", "--fail-on-leak=7", "--suppressions", path, "--", "/bin/sh", "-c", script,
                   app]
        try:
            result = subprocess.run(command, capture_output=True, text=True, env=merged, timeout=60, pass_fds=fds)
            check(result.returncode == 0 and "2 processes tracked objects: 0 leaked" in result.stderr and
                  "0 patterns" not in result.stderr,
                  "run --suppressions through a %s: status %d\n%s" % (kind, result.returncode, result.stderr))
        except subprocess.TimeoutExpired:
            check(False, "run --suppressions through a %s: still running after 60 s" % kind)
            # let a process of the tree that waits for another writer go
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        if kind == "pipe":
            os.close(read_end)
        else:
            os.unlink(fifo)
    # what run copied the patterns to is gone with it
    left = [name for name in os.listdir(env["TMPDIR"]) if name.startswith("livetrack-suppressions")]
    check(not left, "run --suppressions through a pipe: left %r in TMPDIR" % left)


def case_run_tree():
    """livetrack run over a script that runs several tracked programs."""
    app = args.app
    tmpdir = work("tmp")
    os.makedirs(tmpdir, exist_ok=True)
    env = dict(armed_env(), TMPDIR=tmpdir)
    shared = work("tree.json")
    if os.path.exists(shared):
        os.remove(shared)
    # the leaking program's status (7) is dropped by the script: the run still fails
    script = '"$0" --leak 2 2>/dev/null; "$0" --leak 0; exit 0'
    result = livetrack("run", "--fail-on-leak=7", "--json", shared, "--", "/bin/sh", "-c", script, app,
                       expect=7, env=env)
    lines = result.stderr.splitlines()
    summary = [line for line in lines if "processes tracked objects" in line]
    check(summary and summary[0].endswith("2 processes tracked objects: 1 leaked"),
          "run of a tree: no summary of its processes:\n" + result.stderr)
    verdicts = [line for line in lines if re.match(r"  pid \d+ \(cli_app\): ", line)]
    check(len(verdicts) == 2 and "2 leaked objects" in verdicts[0] and "since replaced by pid" in verdicts[0]
          and "no leaks" in verdicts[1] and verdicts[1].endswith("JSON in " + shared),
          "run of a tree: the processes' verdicts:\n" + result.stderr)
    check(any(re.search(r"2 processes wrote %s; it holds pid \d+'s JSON only" % re.escape(shared), line)
              for line in lines), "run of a tree: the replaced JSON not pointed out:\n" + result.stderr)
    # program names and paths from the log reach the terminal printable: a
    # name holding an escape sequence shows it as ?, not as a colour
    odd_dir = work("odd\x1b[31mdir")
    os.makedirs(odd_dir, exist_ok=True)
    odd_app = os.path.join(odd_dir, "app\x1b[31mRED")
    shutil.copy(app, odd_app)
    odd_json = os.path.join(odd_dir, "r\x1b[0m.json")
    result = livetrack("run", "--json", odd_json, "--", "/bin/sh", "-c", script, odd_app, expect=0, env=env)
    check("processes tracked objects" in result.stderr and "\x1b" not in result.stderr and
          "app?[31mRED" in result.stderr and "r?[0m.json" in result.stderr,
          "run of a tree: control characters of names reach the terminal:\n%r" % result.stderr)
    # without --fail-on-leak the status stays the program's; LIVETRACK_EXIT_CODE set by
    # the caller counts as --fail-on-leak does
    livetrack("run", "--", "/bin/sh", "-c", script, app, expect=0, env=env)
    livetrack("run", "--", "/bin/sh", "-c", script, app, expect=9, env=dict(env, LIVETRACK_EXIT_CODE="9"))
    livetrack("run", "--", "/bin/sh", "-c", script, app, expect=0, env=dict(env, LIVETRACK_EXIT_CODE="9x"))
    # timelines: a process started anew empties the file; a forked child appends to its parent's
    timeline = work("tree.csv")
    result = livetrack("run", "--csv", timeline, "--", "/bin/sh", "-c", '"$0" --leak 0; "$0" --leak 0 --fork', app,
                       expect=0, env=env)
    check(result.stderr.count("; timeline in " + timeline) == 3 and
          "2 processes started the timeline %s anew" % timeline in result.stderr,
          "run --csv of a tree: %s" % result.stderr)
    # ... and whose rows it holds: the second program's, which started it last, after the first had ended
    pids = re.findall(r"^  pid (\d+) \(cli_app\)", result.stderr, re.M)
    check(len(pids) == 3 and ("it holds the rows of pid %s, the last to start it" % pids[-1]) in result.stderr and
          "still running" not in result.stderr, "run --csv of a tree: whose rows:\n" + result.stderr)
    # a first program still running when the second starts the timeline anew goes on adding rows
    go = work("overlap.go")
    for stale in (go, work("overlap.csv")):  # the wait reads the timeline's size: none from an earlier run
        if os.path.exists(stale):
            os.unlink(stale)
    overlap = ('"$0" --leak 0 --wait-file "$1" & while [ ! -s "$LIVETRACK_CSV" ]; do sleep 0.02; done; '
               '"$0" --leak 0; touch "$1"; wait')
    result = livetrack("run", "--csv", work("overlap.csv"), "--", "/bin/sh", "-c", overlap, app, go, expect=0, env=env)
    pids = re.findall(r"^  pid (\d+) \(cli_app\)", result.stderr, re.M)
    check(len(pids) == 2 and re.search(r"it holds the rows of pid %s, the last to start it .*, and those that pid %s, "
                                       r"still running then, added after it" % (pids[0], pids[1]), result.stderr),
          "run --csv of overlapping programs: whose rows:\n" + result.stderr)
    # a device is no file a later process replaces
    result = livetrack("run", "--json", "/dev/null", "--", "/bin/sh", "-c", script, app, expect=0, env=env)
    check("replaced" not in result.stderr and "processes wrote" not in result.stderr and
          "wrote no JSON" not in result.stderr, "run --json /dev/null of a tree:\n" + result.stderr)
    # one file per process with %p: nothing replaced, each named
    result = livetrack("run", "--json", work("tree.%p.json"), "--", "/bin/sh", "-c", script, app, expect=0,
                       env=env)
    named = re.findall(r"JSON in (\S+)$", result.stderr, re.M)
    check(len(named) == 2 and all(os.path.exists(path) for path in named) and named[0] != named[1] and
          "processes wrote" not in result.stderr, "run of a tree with %%p: %r\n%s" % (named, result.stderr))
    # a forked child keeps a copy of its parent's context: the parent's to release, not the child's leak
    result = livetrack("run", "--fail-on-leak=7", "--", app, "--fork", "--leak", "0", expect=0, env=env)
    check(re.search(r"\(cli_app\): no leaks \(and 1 object inherited from its parent\)", result.stderr),
          "run of a forking program: the child's inherited context:\n" + result.stderr)
    livetrack("run", "--fail-on-leak=7", "--", app, "--fork", "--leak", "2", expect=7, env=env)
    # a relative $TMPDIR: a process that changes directory still reaches the log
    os.makedirs(work("relative-tmp"), exist_ok=True)
    relative = dict(env, TMPDIR=os.path.relpath(work("relative-tmp")))
    livetrack("run", "--fail-on-leak=7", "--", "/bin/sh", "-c", 'cd /; "$0" --leak 2 2>/dev/null; true', app,
              expect=7, env=relative)
    # a livetrack run inside another passes its processes' verdicts on
    nested = '"$1" run -- "$0" --leak 2 2>/dev/null; exit 0'
    result = livetrack("run", "--fail-on-leak=7", "--", "/bin/sh", "-c", nested, app, args.livetrack, expect=7,
                       env=env)
    # a process that outlives the run is told why its verdict is not counted
    late = '(sleep 1; "$0" --leak 1 2>&1 | grep -o "the run log .* is gone" >&2) & exit 0'
    result = livetrack("run", "--fail-on-leak=7", "--", "/bin/sh", "-c", late, app, expect=0, env=env)
    check("is gone" in result.stderr, "run: a process that outlived it not told:\n" + result.stderr)
    # a long run lists the processes that leaked and counts the others
    many = '"$0" --leak 0; ' * 11 + '"$0" --leak 2 2>/dev/null; exit 0'
    result = livetrack("run", "--", "/bin/sh", "-c", many, app, expect=0, env=env)
    listed = re.findall(r"^  pid \d+ \(cli_app\): (.*)$", result.stderr, re.M)
    check("12 processes tracked objects: 1 leaked" in result.stderr and len(listed) == 1 and
          listed[0].startswith("2 leaked objects") and "  and 11 more with no leaks or misuse" in result.stderr,
          "run of a tree of 12: %r\n%s" % (listed, result.stderr))
    # a crash in the tree is named as such; what it had live is not a leak
    crash = '"$0" --leak 3 --crash 2>/dev/null; "$0" --leak 0; exit 0'
    result = livetrack("run", "--fail-on-leak=7", "--", "/bin/sh", "-c", crash, app, expect=0,
                       env=dict(env, ASAN_OPTIONS="handle_segv=0:detect_leaks=0:verify_asan_link_order=0"))
    check("2 processes tracked objects: 0 leaked, 1 crashed" in result.stderr and
          re.search(r"\(cli_app\): crashed \(Segmentation fault\) with \d+ objects live", result.stderr),
          "run of a tree with a crash:\n" + result.stderr)
    # a script that passes a crash on as its own status keeps it, though another process leaked
    passed_on = '"$0" --leak 2 2>/dev/null; "$0" --leak 0 --crash 2>/dev/null; exit $?'
    livetrack("run", "--fail-on-leak=7", "--", "/bin/sh", "-c", passed_on, app, expect=139,
              env=dict(env, ASAN_OPTIONS="handle_segv=0:detect_leaks=0:verify_asan_link_order=0"))
    # a line the log cannot read is said, and the rest still counts
    garbled = 'printf "garbage\\n" >> "$LIVETRACK_RUN_LOG"; "$0" --leak 2 2>/dev/null; exit 0'
    result = livetrack("run", "--fail-on-leak=7", "--", "/bin/sh", "-c", garbled, app, expect=7, env=env)
    check("1 line of the run log could not be read" in result.stderr,
          "run: a damaged run log line not said:\n" + result.stderr)
    # a line of an older core (11 fields, no times) is still a verdict
    older = ('printf "%s\\t3\\t96\\t0\\t0\\told_core\\t\\t\\t0\\t\\t0\\n" $$ >> "$LIVETRACK_RUN_LOG"; '
             '"$0" --leak 0; exit 0')
    result = livetrack("run", "--fail-on-leak=7", "--", "/bin/sh", "-c", older, app, expect=7, env=env)
    check("could not be read" not in result.stderr and "(old_core): 3 leaked objects" in result.stderr,
          "run: an 11-field run log line:\n" + result.stderr)
    # one process: no summary, the report says it all
    result = livetrack("run", "--fail-on-leak=7", "--", app, "--leak", "2", expect=7, env=env)
    check("processes tracked objects" not in result.stderr, "run of one process: a summary:\n" + result.stderr)
    check_suppressions_through_pipes(app, env)
    # the log is private to the run and gone after it
    check(not os.listdir(tmpdir), "run: left %r in TMPDIR" % os.listdir(tmpdir))
    # no run log (TMPDIR unusable): said once, and the run goes on as before
    result = livetrack("run", "--", "/bin/sh", "-c", script, app, expect=0,
                       env=dict(env, TMPDIR=work("no-such-directory")))
    check("cannot make a run log" in result.stderr and "processes tracked objects" not in result.stderr,
          "run without a run log:\n" + result.stderr)


def run_sample(name, *extra):
    json_path, csv_path = work(name + ".json"), work(name + ".csv")
    for path in (json_path, csv_path):
        if os.path.exists(path):
            os.remove(path)
    result = livetrack("run", "--json", json_path, "--csv", csv_path, *extra, expect=0, env=armed_env())
    check(os.path.exists(json_path) and os.path.exists(csv_path), "%s: no JSON or CSV written\n%s" % (name, result.stderr))
    return json_path, csv_path, result


def check_plot_of_odd_names():
    """A run whose API and type names hold a control character, a C1
    control and bytes that are not UTF-8: the timeline keeps their bytes,
    the report U+FFFD and '?' for them. Plot's table of objects per API and
    type still finds each one's leaks in the report (they read 0)."""
    if not args.odd_names_app:
        return
    # (the text report would print the bytes that are not UTF-8 as they are)
    json_path, csv_path, _ = run_sample("odd_names", "--report", "off", "--", args.odd_names_app)
    livetrack("plot", csv_path, json_path, "-o", work("odd_names.html"), expect=0)
    html = open(work("odd_names.html"), encoding="utf-8", errors="replace").read()
    table = html[html.index("Objects per API and type"):]
    table = table[:table.index("</table>")]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in re.findall(r"<tr\b.*?</tr>", table, re.S)]
    # name, ..., live at the end, leaked: every object of the program leaked
    counts = [(row[-2], row[-1]) for row in rows if row]
    check(len(counts) == 5 and all(live == leaked for live, leaked in counts) and
          sorted(int(leaked) for _, leaked in counts) == [1, 2, 3, 4, 10],
          "plot of odd names: (live at the end, leaked) per row: %r" % counts)


def case_samples():
    source = open(os.path.join(args.source, "samples", "leaky_events.c")).read().splitlines()
    json_path, csv_path, _ = run_sample("leaky_events", "--", os.path.join(args.samples, "leaky_events"))
    out = livetrack("report", json_path, expect=0).stdout
    lines = [int(n) for n in re.findall(r"leaked at main \(leaky_events\.c:(\d+)\)", out)]
    check(len(lines) == 2, "leaky_events: expected two call sites in main:\n" + out)
    for n in lines:
        check("clEnqueue" in source[n - 1], "leaky_events.c:%d is not an enqueue: %r" % (n, source[n - 1]))
    check("20 leaked objects" in out, "leaky_events: not 20 leaks")
    # _start comes from crt1.o, which has no line table: it must not borrow
    # one from the unit around it (main's, whose ranges have a hole there
    # when main is in .text.startup).
    starts = [f for site in json.load(open(json_path))["sites"] for f in site.get("frames", [])
              if f.get("function") == "_start"]
    check(starts, "leaky_events: no _start frame in the JSON sites")
    for frame in starts:
        check(not (frame.get("file") or "").endswith("leaky_events.c"),
              "leaky_events: _start given a line of the sample: %r" % frame)
    check_trace(livetrack("trace", csv_path, json_path, "-o", work("leaky_events.trace.json"), expect=0) and
                work("leaky_events.trace.json"), leaks=20, misuse=0, types=("OpenCL cl_event", "OpenCL cl_context"))
    livetrack("pprof", json_path, "-o", work("leaky_events.pb.gz"), expect=0)
    run([sys.executable, os.path.join(HERE, "check_pprof.py"), work("leaky_events.pb.gz"), "--objects", "20",
         "--function", "main", "--file-line", "leaky_events.c:%d" % lines[0]], expect=0)
    livetrack("plot", csv_path, json_path, "-o", work("leaky_events.html"), expect=0)
    check_html(work("leaky_events.html"))
    livetrack("plot", csv_path, "-o", work("leaky_events.svg"), expect=0)
    check_svg(work("leaky_events.svg"))

    check_csv_replays_to_json(csv_path, json_path)

    check_plot_of_odd_names()

    # parents released before their children end with them
    json_path, csv_path, _ = run_sample("kept_alive", "--", os.path.join(args.samples, "kept_alive"))
    out = livetrack("report", json_path, expect=0).stdout
    check("cl_kernel" in out and "kept_alive.c:" in out, "kept_alive: report:\n" + out)
    # the leaked kernel holds its released program and context (0 bytes), worded as in the exit report
    check("  keeps alive 2 objects the program released: cl_program 0x" in out and
          "  2 objects the program released are kept alive by leaked objects\n" in out,
          "kept_alive: report's kept-alive lines:\n" + out)
    check_csv_replays_to_json(csv_path, json_path)
    with open(csv_path, newline="") as rows:
        check(any(row["event"] == "freed" for row in csv.DictReader(rows)), "kept_alive: no freed row")
    livetrack("plot", csv_path, json_path, "-o", work("kept_alive.html"), expect=0)
    check("<th>freed</th>" in check_html(work("kept_alive.html")), "kept_alive: plot has no freed column")

    # a program with misuse and churn: misuse rows become instants
    json_path, csv_path, _ = run_sample("cli_app", "--", args.app, "--churn", "500", "--misuse", "--leak", "3")
    check_trace(livetrack("trace", csv_path, json_path, "-o", work("cli_app.trace.json"), expect=0) and
                work("cli_app.trace.json"), leaks=3, misuse=1)
    out = livetrack("report", json_path, expect=0).stdout
    check("misused calls:" in out, "cli_app: misuse not in report:\n" + out)
    check_csv_replays_to_json(csv_path, json_path)

    # the context ends with the last buffer made from it: plot, trace and a
    # replay of the timeline must not keep it live
    json_path, csv_path, _ = run_sample("cli_app_orphan", "--", args.app, "--leak", "0", "--orphan")
    last = check_csv_replays_to_json(csv_path, json_path)
    check(last.get(("OpenCL", "cl_context")) == 0, "cli_app --orphan: the context's last row: %r" % last)
    trace = check_trace(livetrack("trace", csv_path, json_path, "-o", work("cli_app_orphan.trace.json"), expect=0) and
                        work("cli_app_orphan.trace.json"), leaks=0, types=("OpenCL cl_context",))
    contexts = [e for e in trace["traceEvents"] if e["ph"] == "C" and e["name"] == "OpenCL cl_context"]
    check(contexts and list(contexts[-1]["args"].values()) == [0], "cli_app --orphan: trace ends %r" % contexts[-1:])


def case_diff_runs():
    base, _, _ = run_sample("diff-base", "--", args.app, "--leak", "2")
    again, _, _ = run_sample("diff-again", "--", args.app, "--leak", "2")
    new, _, _ = run_sample("diff-new", "--", args.app, "--leak", "2", "--extra-leak")
    result = livetrack("diff", base, new, expect=1)
    check("1 new leak site" in result.stdout and "planted_leak" in result.stdout and "cli_app.c:" in result.stdout,
          "diff: the planted leak is not named:\n" + result.stdout)
    check("leak_events" not in result.stdout.split("new:")[1], "diff: an old site is reported as new")
    livetrack("diff", new, base, expect=0)
    # two runs of the same program differ in addresses (ASLR), not in sites
    livetrack("diff", base, again, expect=0)
    # the same program checked out and built in another directory (another
    # CI workspace): its files and modules under another root
    source = os.path.realpath(args.source) + "/"
    build = os.path.realpath(args.build) + "/"
    check(any(f.get("file", "").startswith(source) for site in json.load(open(base))["sites"]
              for f in site["frames"]), "diff-base.json: no frame in %s" % source)
    elsewhere = []
    for path in (base, new):
        name = os.path.basename(path).replace(".json", "-elsewhere.json")
        moved = moved_report(path, build, "/ci/job-2/build/", name)
        elsewhere.append(moved_report(moved, source, "/ci/job-2/src/", name))
    out = livetrack("diff", base, elsewhere[0], expect=0).stdout
    check("no new leak sites" in out, "diff of a run from another checkout:\n" + out)
    result = livetrack("diff", base, elsewhere[1], expect=1)
    check("1 new leak site" in result.stdout and "planted_leak" in result.stdout,
          "diff from another checkout: the planted leak is not the one new site:\n" + result.stdout)


def case_screenshot():
    chromium = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("no chromium: skipped")
        return SKIP
    json_path, csv_path, _ = run_sample("shot", "--", args.app, "--churn", "2000", "--misuse", "--leak", "4",
                                        "--extra-leak")
    html = work("shot.html")
    livetrack("plot", csv_path, json_path, "-o", html, expect=0)
    png = work("shot.png")
    if os.path.exists(png):
        os.remove(png)
    profile = work("chromium-profile")
    run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + profile,
         "--screenshot=" + png, "--window-size=1400,2000", "file://" + os.path.abspath(html)], timeout=180,
        env={"HOME": args.work})
    if not check(os.path.exists(png), "chromium wrote no screenshot"):
        return 1
    width, height, colours, busy = decode_png(png)
    print("screenshot %dx%d, %d colours, %.0f%% not background" % (width, height, len(colours), busy * 100))
    check((width, height) == (1400, 2000), "screenshot is %dx%d" % (width, height))
    check(os.path.getsize(png) > 50_000, "screenshot is only %d bytes" % os.path.getsize(png))
    check(len(colours) > 200, "screenshot has only %d colours: blank?" % len(colours))
    check(busy > 0.15, "screenshot is %.0f%% background: blank?" % ((1 - busy) * 100))


def install_libdir():
    """The build's CMAKE_INSTALL_LIBDIR (lib, or lib/x86_64-linux-gnu for a distribution's prefix)."""
    with open(os.path.join(args.build, "CMakeCache.txt")) as cache:
        for line in cache:
            if line.startswith("CMAKE_INSTALL_LIBDIR:"):
                return line.split("=", 1)[1].strip()
    return "lib"


def case_install():
    prefix, build = work("prefix"), work("consumer-build")
    for path in (prefix, build):
        shutil.rmtree(path, ignore_errors=True)
    run(["cmake", "--install", args.build, "--prefix", prefix], expect=0, timeout=300)
    binary = os.path.join(prefix, "bin", "livetrack")
    out = run([binary, "--version"], expect=0).stdout
    check(out.startswith("livetrack "), "installed --version: %r" % out)
    lib = install_libdir()
    for path in ("include/livetrack/livetrack.h", "include/CL/cl_ext_live_object_tracking.h",
                 lib + "/liblivetrack_cl.so", lib + "/pkgconfig/livetrack.pc",
                 lib + "/cmake/livetrack/livetrackConfig.cmake"):
        check(os.path.exists(os.path.join(prefix, path)), "not installed: " + path)
    # the installed command finds the installed layer
    result = run([binary, "run", "-v", "--api", "opencl", "--", os.path.join(args.samples, "leaky_events")], expect=0,
                 env=armed_env())
    check("OPENCL_LAYERS=" + os.path.realpath(os.path.join(prefix, lib, "liblivetrack_cl.so")) in result.stderr,
          "installed livetrack does not use the installed layer:\n" + result.stderr[:2000])
    check("20 leaked objects" in result.stderr, "installed run: no leak report")

    flags = ["-fsanitize=address,undefined"] if args.sanitize else []
    consumer = os.path.join(HERE, "consumer")
    run(["cmake", "-S", consumer, "-B", build, "-DCMAKE_PREFIX_PATH=" + prefix,
         "-DCMAKE_C_FLAGS=" + " ".join(flags)], expect=0, timeout=300)
    run(["cmake", "--build", build], expect=0, timeout=300)
    env = {"ASAN_OPTIONS": "detect_leaks=0"}
    check("works" in run([os.path.join(build, "consumer")], expect=0, env=env).stdout, "find_package consumer")

    pc_env = {"PKG_CONFIG_PATH": os.path.join(prefix, lib, "pkgconfig")}
    cflags = run(["pkg-config", "--cflags", "livetrack"], expect=0, env=pc_env).stdout.split()
    libs = run(["pkg-config", "--libs", "livetrack"], expect=0, env=pc_env).stdout.split()
    libdir = run(["pkg-config", "--variable=libdir", "livetrack"], expect=0, env=pc_env).stdout.strip()
    layer = run(["pkg-config", "--variable=opencl_layer", "livetrack"], expect=0, env=pc_env).stdout.strip()
    check(os.path.exists(layer), "pkg-config opencl_layer: %s" % layer)
    program = work("consumer-pc")
    run(["cc", "-o", program, os.path.join(consumer, "consumer.c")] + flags + cflags + libs +
        ["-Wl,-rpath," + libdir], expect=0)
    check("works" in run([program], expect=0, env=env).stdout, "pkg-config consumer")

    # Installed where the path holds a space: ld.so splits LD_PRELOAD there,
    # so the preloaded front ends cannot be loaded. Said, not dropped
    # silently; OpenCL (OPENCL_LAYERS splits at colons only) still works.
    spaced = work("pre fix")
    shutil.rmtree(spaced, ignore_errors=True)
    run(["cmake", "--install", args.build, "--prefix", spaced], expect=0, timeout=300)
    spaced_binary = os.path.join(spaced, "bin", "livetrack")
    result = run([spaced_binary, "run", "--", os.path.join(args.samples, "leaky_events")], expect=0, env=armed_env())
    check("20 leaked objects" in result.stderr and "cannot be preloaded" not in result.stderr,
          "installed under a space: OpenCL not tracked, or ld.so complained:\n" + result.stderr[:2000])
    if os.path.exists(os.path.join(spaced, lib, "liblivetrack_ze.so")):
        check("not tracking Level Zero: the path of" in result.stderr and "holds a space" in result.stderr,
              "installed under a space: Level Zero dropped without a word:\n" + result.stderr[:2000])
        result = run([spaced_binary, "run", "--api", "ze", "--", "true"], expect=2)
        check("holds a space" in result.stderr, "run --api ze under a space: " + result.stderr)

    check_unloadable_front_ends(prefix, lib)


def check_unloadable_front_ends(prefix, lib):
    """An installed tree moved where a front end's dependency is missing (a build taken to a machine without
    libze_loader, say). Preloaded, that front end would stop every program before main; it is left out (said with
    -v), --api naming it fails, and with none left run fails."""
    moved = work("moved")
    shutil.rmtree(moved, ignore_errors=True)
    shutil.copytree(prefix, moved, symlinks=True)
    binary = os.path.join(moved, "bin", "livetrack")
    vanishing = work("vanishing")
    shutil.rmtree(vanishing, ignore_errors=True)
    os.makedirs(vanishing)
    with open(os.path.join(vanishing, "vanishing.c"), "w") as source:
        source.write("int vanishing(void) { return 1; }\n")
    with open(os.path.join(vanishing, "front.c"), "w") as source:
        source.write("int vanishing(void);\nint front_end(void) { return vanishing(); }\n")

    def unloadable(name):
        """Puts a library needing liblivetrack_test_vanishing.so at lib/name, then removes that one."""
        needed = os.path.join(vanishing, "liblivetrack_test_vanishing.so")
        run(["cc", "-shared", "-fPIC", "-o", needed, os.path.join(vanishing, "vanishing.c")], expect=0)
        path = os.path.join(moved, lib, name)
        if os.path.lexists(path):
            os.remove(path)
        run(["cc", "-shared", "-fPIC", "-o", path, os.path.join(vanishing, "front.c"), "-L" + vanishing,
             "-llivetrack_test_vanishing"], expect=0)
        os.remove(needed)

    samples = os.path.join(args.samples, "leaky_events")
    unloadable("liblivetrack_ze.so")
    result = run([binary, "run", "-v", "--", samples], expect=0, env=armed_env())
    check("20 leaked objects" in result.stderr and "error while loading shared libraries" not in result.stderr,
          "a front end that cannot load stopped the program:\n" + result.stderr[:2000])
    check("not tracking Level Zero:" in result.stderr and "liblivetrack_test_vanishing.so" in result.stderr,
          "run -v: the unloadable Level Zero front end not named:\n" + result.stderr[:2000])
    check("liblivetrack_ze.so" not in result.stderr.split("LD_PRELOAD=", 1)[-1].split("\n", 1)[0],
          "run -v: the unloadable front end was preloaded:\n" + result.stderr[:2000])
    result = run([binary, "run", "--", samples], expect=0, env=armed_env())
    check("20 leaked objects" in result.stderr and "not tracking" not in result.stderr,
          "run without -v: the absent API spoken of, or OpenCL lost:\n" + result.stderr[:2000])
    result = run([binary, "run", "--api", "ze", "--", "true"], expect=2)
    check("cannot load the Level Zero front end here: liblivetrack_test_vanishing.so" in result.stderr,
          "run --api ze with its front end unloadable: " + result.stderr)
    for name in ("liblivetrack_cl.so", "liblivetrack_cuda.so"):
        if os.path.lexists(os.path.join(moved, lib, name)):
            unloadable(name)
    result = run([binary, "run", "--", "true"], expect=2)
    check("no front end can be used:" in result.stderr, "run with no loadable front end: " + result.stderr)


CASES = {name[5:]: function for name, function in globals().items() if name.startswith("case_")}


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("--livetrack", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--app")
    parser.add_argument("--samples")
    parser.add_argument("--source")
    parser.add_argument("--build")
    parser.add_argument("--chromium")
    parser.add_argument("--sanitize", action="store_true")
    parser.add_argument("--asan-app")
    parser.add_argument("--odd-names-app")
    args = parser.parse_args()
    args.work = os.path.join(args.work, args.case)
    os.makedirs(args.work, exist_ok=True)
    status = CASES[args.case]()
    if status == SKIP:
        return SKIP
    print("cli_%s: %s" % (args.case, "%d failures" % len(failures) if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
