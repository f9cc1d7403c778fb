#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# reader.py -- idle and busy readers of a pool's versions, for versions.bats
"""Usage: reader.py PORT REGION/POOL VERSION SESSIONS HANDLES [READS]

Opens SESSIONS sessions, each with HANDLES read-only opens of the pool,
and on each handle reads 1 byte of VERSION at offset 0 (READ_AT); then
READS more READ_ATs of 1 byte on each handle, the version going from
VERSION up to the pool's generation and round again (0: none; -1: for
ever, after printing "hammering" once the first round is done). From
source address $READER_SRC if set (another address is another share of
the target's hashing slots). Prints
"holding N" (N: the READ_ATs that worked) or, for the first one that
failed, "ERROR code msg"; then holds everything open, idle, until the
target closes a session (it prints "closed: ERROR code msg", the
target's last word, and exits) or until it is killed.
"""
import os
import select
import struct
import sys

from rpmem_wire import (ERROR, OPEN, OPEN_OK, READ_AT, DATA,
                        error_text, frame, hello_session, recv_frame, wstr)


def read_at(s, rid, handle, version):
    """one READ_AT of 1 byte at 0: None, or the ERROR as text"""
    s.sendall(frame(READ_AT, rid, struct.pack("<IQIQ", handle, 0, 1,
                                              version)))
    t, _, p = recv_frame(s)
    if t == DATA:
        return None
    return error_text(p) if t == ERROR else "unexpected reply %d" % t


def main():
    port, path, version, nses, nh = (int(sys.argv[1]), sys.argv[2],
                                     int(sys.argv[3]), int(sys.argv[4]),
                                     int(sys.argv[5]))
    region, pool = path.split("/")
    reads = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    opens, ok = [], 0
    gen = version
    for _ in range(nses):
        s, _ = hello_session(port, "reader.py",
                             os.environ.get("READER_SRC"))
        for i in range(nh):
            s.sendall(frame(OPEN, 10 + i, wstr(region) + wstr(pool) +
                            bytes([0, 0])))
            t, _, p = recv_frame(s)
            if t != OPEN_OK:
                sys.exit("no OPEN_OK: " + error_text(p))
            handle = struct.unpack_from("<I", p)[0]
            gen = struct.unpack_from("<Q", p, 13)[0]
            err = read_at(s, 100 + i, handle, version)
            if err:
                print(err, flush=True)
                sys.exit(1)
            ok += 1
            opens.append((s, handle))
    k = 0
    while k < reads or reads < 0:
        if reads < 0 and k == 1:
            print("hammering", flush=True)
        k += 1
        for s, handle in opens:
            v = version + (k - 1) % (gen - version + 1)
            err = read_at(s, 1000, handle, v)
            if err:
                print(err, flush=True)
                sys.exit(1)
            ok += 1
    print("holding %d" % ok, flush=True)
    socks = list({s for s, _ in opens})
    while True:
        r, _, _ = select.select(socks, [], [])
        for s in r:
            try:
                t, _, p = recv_frame(s)
            except (ConnectionError, OSError):
                print("closed", flush=True)
                return
            print("closed: " + (error_text(p) if t == ERROR else str(t)),
                  flush=True)
            return


if __name__ == "__main__":
    main()
