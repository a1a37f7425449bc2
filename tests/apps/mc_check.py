#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a known set of keys to a memcached server and reads every one back
with a second connection (the text protocol); exits non-zero on any
mismatch.  Prints one deterministic line.

    mc_check.py PORT [KEYS]
"""
import socket
import sys


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s, s.makefile("rb")


def main():
    port = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    w, wf = connect(port)
    for i in range(n):
        value = ("value-%d-" % i) * (1 + i % 7)
        w.sendall(b"set mc_check_%d 0 0 %d\r\n%s\r\n" % (i, len(value), value.encode()))
        reply = wf.readline()
        if reply != b"STORED\r\n":
            print("mc_check: set %d: %r" % (i, reply))
            return 1
    r, rf = connect(port)
    bad = 0
    for i in range(n):
        want = (("value-%d-" % i) * (1 + i % 7)).encode()
        r.sendall(b"get mc_check_%d\r\n" % i)
        head = rf.readline().split()
        if len(head) != 4 or head[0] != b"VALUE":
            bad += 1
            continue
        data = rf.read(int(head[3]) + 2)[:-2]
        end = rf.readline()
        if data != want or end != b"END\r\n":
            bad += 1
    print("mc_check: %d keys written, %d read back correctly" % (n, n - bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
