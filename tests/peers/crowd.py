#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# crowd.py -- many pools and many sessions, cheaply, for the paging tests
"""Usage: crowd.py COMMAND [ARGS]

  pools DIR N [PREFIX]  write N empty 4 KiB pools PREFIX00000.. straight
                        into the dir region DIR: a sparse pool file and
                        its .rpmemd/<pool>.meta as rpmemd writes them
                        (the format of daemon/storage/pool/meta.h); print "pools N"
  sessions PORT N [CLIENT]
                        open N sessions past HELLO_OK (HELLO's client
                        string CLIENT, default "crowd.py") and hold them;
                        print "session ID" for each, the target's id from
                        HELLO_OK, then "open N" once all are up; then
                        wait until stdin closes
  list PORT [CURSOR]    one LIST of every region: without flags (as an
                        older client sends it), or a page from CURSOR
                        ("" for the first); print "LIST_REPLY regions R
                        pools P next NEXT" (NEXT only for a page) or
                        "ERROR code message"
"""
import os
import struct
import sys
import uuid

from rpmem_wire import (ERROR, LIST, Reader, hello_session,
                        request, wstr)

LIST_PAGE = 1
POOL_SIZE = 4096


def meta_text(size):
    """a new, empty pool's metadata"""
    return ("magic=rpmemd-pool-meta\nversion=1\nuuid=%s\nsize=%d\n"
            "created=1700000000\nsource=\nstate=empty\ngeneration=0\n"
            "last_sync=0\n" % (uuid.uuid4(), size))


def pools(region, n, prefix="p"):
    """N pools written directly into a region directory"""
    mdir = os.path.join(region, ".rpmemd")
    os.makedirs(mdir, exist_ok=True)
    for i in range(n):
        name = "%s%05d" % (prefix, i)
        fd = os.open(os.path.join(region, name),
                     os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        os.ftruncate(fd, POOL_SIZE)
        os.close(fd)
        with open(os.path.join(mdir, name + ".meta"), "w") as f:
            f.write(meta_text(POOL_SIZE))
    print("pools %d" % n)


def hello(port, client="crowd.py"):
    """a connection past HELLO_OK and its session id"""
    return hello_session(port, client)


def sessions(port, n, client):
    """hold N sessions until stdin closes"""
    held = []
    for _ in range(n):
        s, sid = hello(port, client)
        held.append(s)
        print("session %d" % sid)
    print("open %d" % len(held), flush=True)
    sys.stdin.read()
    for s in held:
        s.close()


def list_once(port, cursor):
    """one LIST, unpaged (cursor None) or a page"""
    s, _ = hello(port)
    p = wstr("")
    if cursor is not None:
        p += struct.pack("<I", LIST_PAGE) + wstr(cursor)
    mtype, body = request(s, LIST, 2, p)
    r = Reader(body)
    if mtype == ERROR:
        print("ERROR %d %s" % (r.take("I"), r.str()))
        return
    nreg = r.take("I")
    for _ in range(nreg):
        r.str(), r.take("B"), r.str(), r.take("QQII")
    npools = r.take("I")
    for _ in range(npools):
        r.str(), r.str(), r.take("16sQBQQQ"), r.str(), r.str()
        r.take("IQQ")
    line = "LIST_REPLY regions %d pools %d" % (nreg, npools)
    if cursor is not None:
        line += " next %s" % r.str()
    if r.i != len(body):
        line += " trailing %d" % (len(body) - r.i)
    print(line)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "pools":
        pools(sys.argv[2], int(sys.argv[3]),
              sys.argv[4] if len(sys.argv) > 4 else "p")
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "sessions":
        sessions(int(sys.argv[2]), int(sys.argv[3]),
                 sys.argv[4] if len(sys.argv) == 5 else "crowd.py")
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "list":
        list_once(int(sys.argv[2]),
                  sys.argv[3] if len(sys.argv) == 4 else None)
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
