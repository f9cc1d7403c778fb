#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# flush_proxy.py -- a TCP proxy between initiators and rpmemd (plain TCP)
# for any number of connections, that holds back the target's reply to
# each FLUSH until a FLUSH of another pool (another handle, on this
# connection or another) came after it, or HOLD seconds passed. A process
# that sends the FLUSHes of two files' drains before it waits for either
# reply gets the first reply at once; one that waits for the first before
# it sends the second stalls HOLD seconds. Prints "PORT P" (where it
# listens: LISTEN_PORT, or one the system chose for 0), "CONN N" for each
# connection it accepts, then one line per FLUSH reply, as it goes:
# "FLUSH CONN HANDLE overlapped" (another pool's FLUSH came after it) or
# "FLUSH CONN HANDLE held" (HOLD passed first). Runs until killed.
#
# Usage: flush_proxy.py LISTEN_PORT TARGET_PORT [HOLD (0.3)]
import struct
import sys
import threading
import time

from rpmem_wire import (FLUSH, HDR_SIZE, OK, connect_target, listen_port,
                        relay_frames)


class State:
    def __init__(self):
        self.cv = threading.Condition()
        self.seq = 0        # FLUSHes seen, all connections
        self.last = {}      # (connection, handle) -> seq of its last FLUSH
        self.flush = {}     # (connection, FLUSH id) -> (its seq, pool)
        self.out = threading.Lock()

    def later_elsewhere(self, pool, seq):
        return any(s > seq for p, s in self.last.items() if p != pool)


def upstream(client, target, st, conn):
    """initiator to target, every frame at once"""
    def seen(ftype, fid, frame):
        if ftype != FLUSH:
            return
        # the payload, after the header, starts with the handle
        pool = (conn, struct.unpack_from("<I", frame, HDR_SIZE)[0])
        with st.cv:
            st.seq += 1
            st.last[pool] = st.seq
            st.flush[(conn, fid)] = (st.seq, pool)
            st.cv.notify_all()
    relay_frames(client, target, seen)


def downstream(target, client, st, conn, hold):
    """target to initiator, a FLUSH's OK held back (see the top)"""
    def held(ftype, fid, _frame):
        with st.cv:
            f = st.flush.pop((conn, fid), None) if ftype == OK else None
            if f is None:
                return
            seq, pool = f
            end = time.monotonic() + hold
            what = "overlapped"
            while not st.later_elsewhere(pool, seq):
                left = end - time.monotonic()
                if left <= 0:
                    what = "held"
                    break
                st.cv.wait(left)
        with st.out:
            print("FLUSH %d %d %s" % (pool[0], pool[1], what), flush=True)
    relay_frames(target, client, held)


def serve(client, tport, st, conn, hold):
    target = connect_target(client, tport)
    up = threading.Thread(target=upstream, args=(client, target, st, conn),
                          daemon=True)
    up.start()
    try:
        downstream(target, client, st, conn, hold)
    except OSError:
        pass
    up.join()


def main():
    lport, tport = int(sys.argv[1]), int(sys.argv[2])
    hold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
    ls = listen_port(lport, 16)
    st = State()
    conn = 0
    while True:
        client, _ = ls.accept()
        conn += 1
        print("CONN %d" % conn, flush=True)
        threading.Thread(target=serve, args=(client, tport, st, conn, hold),
                         daemon=True).start()


if __name__ == "__main__":
    main()
