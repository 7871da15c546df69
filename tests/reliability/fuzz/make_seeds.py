#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (fuzz/corpus/<target>/).

The seeds are committed; this script documents how they were made and
remakes them after the input format changes:  python3 make_seeds.py

fuzz_registry input: operations of one byte (operation << 2; the switch
operation adds the thread that runs the rest) followed by their argument
bytes (see fuzz_registry.c).
fuzz_config input: a first byte (even: settings, odd: suppressions), then
setting-index + value + NUL pairs, or the text of a suppressions file.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# fuzz_registry operations, as numbered in fuzz_registry.c
CREATE, RETAIN, RELEASE, DESTROY, LOOKUP, STILL_LIVE, SNAPSHOT, REPORT, STATS, MARK, SINCE, MISUSE, FAULT, \
    WHILE_LIVE, CREATE2, SWITCH = range(16)

OWN, ANY = 0, 128  # type selector bytes: the object's own type, any type
NO_PARENT = 0


def slot(n, cuda=False):
    return n | (0x80 if cuda else 0)


def parent_byte(n):
    # pick_parent: b < 40 none, 40..231 slot b % 16, >= 232 unknown handle
    b = 48 + n
    assert b % 16 == n
    return b


def op(code, *args):
    return bytes([code << 2]) + bytes(args)


def to(thread):
    """The rest runs on simulated thread `thread` (0..3)."""
    return bytes([(SWITCH << 2) | thread])


def create(n, type_=0, size=0, owner=0, via=False, p=None, p2=None, cuda=False):
    owner_byte = owner | (0x80 if via else 0)
    return op(CREATE, slot(n, cuda), type_, size, owner_byte,
              NO_PARENT if p is None else parent_byte(p), NO_PARENT if p2 is None else parent_byte(p2))


def retain(n, t=OWN, cuda=False):
    return op(RETAIN, slot(n, cuda), t)


def release(n, t=OWN, cuda=False):
    return op(RELEASE, slot(n, cuda), t)


def destroy(n, t=OWN, cuda=False):
    return op(DESTROY, slot(n, cuda), t)


def refused(code, n, keep=False, t=OWN, cuda=False):
    """A release or destroy the API refuses: the object is put back, its parents held by keepers meanwhile or not."""
    return bytes([(code << 2) | 1 | (2 if keep else 0), slot(n, cuda), t])


def everything():
    return (op(SNAPSHOT, 0) + op(SNAPSHOT, 1 | (1 << 2)) + op(STATS) + op(REPORT, 0) + op(REPORT, 0x22) +
            op(REPORT, 4 | 8))


registry_seeds = {
    # a context, a queue on it, memory and events through the queue
    "basic": create(0) + create(1, 1, p=0) + create(2, 2, size=200, via=True, p=1) + create(3, 3, p=1, p2=2) +
    retain(2) + release(2) + everything() + release(0) + release(1) + everything() + destroy(2) + destroy(3) +
    everything(),
    # a handle created again while live: the stale object stays while a child holds it
    "replace": create(3) + create(4, 1, p=3) + create(3, 2) + op(LOOKUP, 3) + op(STATS) + release(4) +
    everything() + create(5, p=5) + create(5, p=5) + everything(),
    # parent caches of different threads see a parent released and made again
    "threads": to(1) + create(0) + create(1, 1, p=0) + to(2) + release(0) + create(0, 0, owner=1) + to(1) +
    create(2, 1, p=0) + to(3) + op(LOOKUP, 2) + everything() + release(1) + to(1) + release(2) + to(2) +
    everything(),
    # kept alive only by children: retain allowed, release refused
    "kept_alive": create(0) + create(1, 1, p=0) + release(0) + retain(0) + release(0) + release(0) + release(0, ANY) +
    destroy(0) + op(WHILE_LIVE, 0) + op(STILL_LIVE, 1) + everything() + release(1) + everything(),
    # the same handles in two domains
    "domains": create(0) + create(0, cuda=True) + create(1, 1, p=0, cuda=True) + release(0) + everything() +
    op(SNAPSHOT, 2) + op(SNAPSHOT, 3) + retain(0, cuda=True) + destroy(0, cuda=True) + everything(),
    # every kind of bad call, from every thread
    "misuse": b"".join(to(k % 4) + op(MISUSE, k, (0x21 * k) % 256) for k in range(12)) + create(6) +
    b"".join(op(MISUSE, k, 6) for k in range(12)) + op(RETAIN, slot(6), 250) + everything(),
    # allocation failures while creating, snapshotting and reporting
    # (a fault operation arms only with a first argument >= 0xf0; its low
    # four bits say how many allocations pass first)
    "faults": op(FAULT, 0xf0, 3) + create(0) + create(1, p=0) + everything() + op(FAULT, 0xf2, 1) +
    b"".join(create(n, n % 4, size=150 + n, p=n - 1) for n in range(2, 16)) + everything() + op(FAULT, 0xf0, 0) +
    everything() + op(FAULT, 0x10, 0) + everything(),
    # marks and what was made since
    "marks": create(0) + op(MARK) + create(1, p=0) + create(2, owner=2) + op(SINCE, 0) + op(SINCE, 2 << 2) +
    op(REPORT, 1) + op(REPORT, 16 | 1) + release(1) + to(1) + op(MARK) + op(SINCE, 0) + everything(),
    # releases and destroys the API refuses: the same objects back, with parents kept or looked up again
    "refused": create(0) + create(1, 1, p=0) + create(2, 2, size=200, p=1, p2=0) + refused(DESTROY, 2) +
    refused(DESTROY, 2, keep=True) + retain(1) + refused(RELEASE, 1) + release(1) + release(0) +
    refused(DESTROY, 2, keep=True) + refused(DESTROY, 2) + everything() + create(3) + create(4, p=3) + create(3, 1) +
    refused(DESTROY, 4, keep=True) + refused(DESTROY, 4) + create(5, p=5) + create(5, p=5) + refused(DESTROY, 5, keep=True) +
    everything() + destroy(2) + destroy(4) + everything(),
    # long chains: deaths cascade through many parents
    "chain": create(0) + b"".join(create(n, n % 4, p=n - 1, p2=max(0, n - 2)) for n in range(1, 16)) +
    b"".join(release(n) for n in range(15)) + everything() + release(15) + everything(),
}

config_seeds = {
    # every setting with good and bad values (indices are settings.c's table order)
    "settings_all": b"\x00" + b"".join(bytes([i]) + v + b"\x00" for i in range(16) for v in (
        b"1", b"0", b"yes", b"OFF", b"always", b"Auto", b"-1", b"64", b"65", b"255", b"out.%p.txt", b"",
        b"  12", b"12 ", b"+3", b"9223372036854775808", b"%p%p%", b"tru")),
    "settings_long": b"\x00\x03-1\x00\x03 1000\x00\x03-2\x00\x04 16\x00\x040x10\x00\x08-9223372036854775808\x00",
    "expand": b"\x00\x00/tmp/report.%p.txt\x00\x07%%pp\x00\x00" + b"%p" * 100 + b"\x00",
    "suppressions": b"\x01# leaks we cannot fix\n\ntype:cl_event\n  function: third_party_*  \nmodule:*libfoo.so*\n"
                    b"file:*/vendor/*\nbogus:thing\nno colon here\ntype:\n\ttype :fz_?\r\ntype:a:b\n#type:x\n",
    "suppressions_nul": b"\x01type:abc\x00def\nfunction:*\nmodule:[a-\nfile:\\*\n" + b"type:x\n" * 70,
    # comments after a pattern (a # after a blank) and a # inside one
    "suppressions_comments": b"\x01type:cl_event  # ours\nfunction:fz_#name\nmodule:*libfoo.so*\t#tab\n   # indented\n"
                             b"file:a #b #c\ntype:#\ntype: #only a comment\n#\n",
    # `[`, `]` and `\` are bytes like any other (no bracket expressions, no escapes); the names after the
    # patterns are there to be picked as names to match
    "suppressions_brackets": b"\x01type:*[ab]*\nfile:*\\*\ntype:make_name[abi:cxx11](_cl_context*, _cl_mem**)\n"
                             b"function:operator[]\nmodule:/opt/app[1]/*\nfile:C:\\src\\*.c\ntype:we\"ird\\fn\n"
                             b"function:x[!a]y\ntype:[\nfunction:]\nmodule:\\\n"
                             b"make_name[abi:cxx11](_cl_context*, _cl_mem**)\noperator[]\n/opt/app[1]/lib.so\n"
                             b"C:\\src\\lib.c\nwe\"ird\\fn\nxby\nabc\n[\n]\n\\\n",
}


def write(directory, seeds):
    path = os.path.join(HERE, "corpus", directory)
    os.makedirs(path, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)


write("fuzz_registry", registry_seeds)
write("fuzz_config", config_seeds)
