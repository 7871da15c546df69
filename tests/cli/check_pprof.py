#!/usr/bin/env python3
"""Decodes a pprof profile written by `livetrack pprof` and checks it.

No protobuf library: gunzip, then a walk over the wire format (varints and
length-delimited fields) following github.com/google/pprof proto/profile.proto.

usage: check_pprof.py PROFILE.pb.gz --objects N [--bytes N] [--samples N]
                      [--function NAME]... [--file-line FILE:LINE]...
Prints the decoded samples; exits 1 when a check fails.
"""
import argparse
import gzip
import sys


def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def fields(data):
    """(field number, wire type, value) of each field of one message."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 2:
            length, at = varint(data, at)
            value = data[at:at + length]
            at += length
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError("wire type %d" % wire)
        yield number, wire, value


def packed(wire, value):
    if wire == 0:
        return [value]
    out, at = [], 0
    while at < len(value):
        item, at = varint(value, at)
        out.append(item)
    return out


def message(data):
    out = {}
    for number, wire, value in fields(data):
        out.setdefault(number, []).append((wire, value))
    return out


def decode(path):
    raw = open(path, "rb").read()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    profile = message(data)
    strings = [v.decode("utf-8") for _, v in profile.get(6, [])]
    assert strings and strings[0] == "", "string_table[0] must be empty"

    def string(index):
        return strings[index]

    sample_types = []
    for _, v in profile.get(1, []):
        m = message(v)
        sample_types.append((string(m.get(1, [(0, 0)])[0][1]), string(m.get(2, [(0, 0)])[0][1])))
    functions = {}
    for _, v in profile.get(5, []):
        m = message(v)
        functions[m[1][0][1]] = (string(m.get(2, [(0, 0)])[0][1]), string(m.get(4, [(0, 0)])[0][1]))
    mappings = {}
    for _, v in profile.get(3, []):
        m = message(v)
        mappings[m[1][0][1]] = (m.get(2, [(0, 0)])[0][1], m.get(3, [(0, 0)])[0][1])
    locations = {}
    for _, v in profile.get(4, []):
        m = message(v)
        lines = []
        for _, line in m.get(4, []):
            lm = message(line)
            fid = lm[1][0][1]
            assert fid in functions, "line names an unknown function %d" % fid
            lines.append((functions[fid][0], functions[fid][1], lm.get(2, [(0, 0)])[0][1]))
        mapping = m.get(2, [(0, 0)])[0][1]
        address = m.get(3, [(0, 0)])[0][1]
        if mapping:
            assert mapping in mappings, "location names an unknown mapping"
            start, limit = mappings[mapping]
            assert start <= address < limit, "address outside its mapping"
        locations[m[1][0][1]] = lines
    samples = []
    for _, v in profile.get(2, []):
        m = message(v)
        ids = [i for w, x in m.get(1, []) for i in packed(w, x)]
        values = [i for w, x in m.get(2, []) for i in packed(w, x)]
        labels = {}
        for _, label in m.get(3, []):
            lm = message(label)
            labels[string(lm[1][0][1])] = string(lm[2][0][1])
        for i in ids:
            assert i in locations, "sample names an unknown location %d" % i
        samples.append({"stack": [locations[i] for i in ids], "values": values, "labels": labels})
    default = profile.get(14)
    return {
        "sample_types": sample_types,
        "samples": samples,
        "default": string(default[0][1]) if default else None,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("profile")
    parser.add_argument("--objects", type=int)
    parser.add_argument("--bytes", type=int)
    parser.add_argument("--samples", type=int)
    parser.add_argument("--function", action="append", default=[])
    parser.add_argument("--file-line", action="append", default=[])
    args = parser.parse_args()

    p = decode(args.profile)
    failed = []
    if p["sample_types"] != [("objects", "count"), ("bytes", "bytes")]:
        failed.append("sample types are %r" % p["sample_types"])
    if p["default"] != "objects":
        failed.append("default sample type is %r" % p["default"])
    objects = sum(s["values"][0] for s in p["samples"])
    size = sum(s["values"][1] for s in p["samples"])
    for s in p["samples"]:
        if len(s["values"]) != 2:
            failed.append("a sample has %d values" % len(s["values"]))
        top = s["stack"][0] if s["stack"] else []
        print("sample %s objects=%d bytes=%d at %s" % (s["labels"], s["values"][0], s["values"][1], top))
    if args.objects is not None and objects != args.objects:
        failed.append("objects: %d, expected %d" % (objects, args.objects))
    if args.bytes is not None and size != args.bytes:
        failed.append("bytes: %d, expected %d" % (size, args.bytes))
    if args.samples is not None and len(p["samples"]) != args.samples:
        failed.append("samples: %d, expected %d" % (len(p["samples"]), args.samples))
    seen = {line for s in p["samples"] for loc in s["stack"] for line in loc}
    for name in args.function:
        if not any(f == name for f, _, _ in seen):
            failed.append("no frame in function %s" % name)
    for spec in args.file_line:
        file, line = spec.rsplit(":", 1)
        if not any(fl.endswith(file) and ln == int(line) for _, fl, ln in seen):
            failed.append("no frame at %s" % spec)
    for f in failed:
        print("check_pprof: " + f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
