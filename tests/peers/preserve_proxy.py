#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# preserve_proxy.py -- a TCP proxy between rpmemctl and rpmemd (plain TCP)
# that holds back the target's reply to each PRESERVE until the initiator
# sent another frame after that PRESERVE, or HOLD seconds passed: an
# initiator that waits for the reply before it sends the WRITEs of the
# batch stalls HOLD seconds per PRESERVE (a stall), one that goes on
# (TCP: the target journals a WRITE's blocks before it applies it) never
# does. Prints "PORT P" (where it listens: LISTEN_PORT, or one the
# system chose for 0), serves one connection, then prints
# "PRESERVE N stalls S" and exits.
#
# Usage: preserve_proxy.py LISTEN_PORT TARGET_PORT [HOLD (0.5)]
import sys
import threading
import time

from rpmem_wire import (OK, PRESERVE, connect_target, listen_port,
                        relay_frames)


class State:
    def __init__(self):
        self.cv = threading.Condition()
        self.sent = 0          # frames the initiator sent
        self.preserve = {}     # PRESERVE id -> frames sent before it
        self.count = 0
        self.stalls = 0
        self.done = False


def upstream(client, target, st):
    """initiator to target, every frame at once"""
    def seen(ftype, fid, _frame):
        with st.cv:
            st.sent += 1
            if ftype == PRESERVE:
                st.preserve[fid] = st.sent
                st.count += 1
            st.cv.notify_all()
    relay_frames(client, target, seen)
    with st.cv:
        st.done = True
        st.cv.notify_all()


def downstream(target, client, st, hold):
    """target to initiator, a PRESERVE's OK held back (see the top)"""
    def held(ftype, fid, _frame):
        with st.cv:
            at = st.preserve.pop(fid, None) if ftype == OK else None
            if at is None:
                return
            end = time.monotonic() + hold
            while st.sent <= at and not st.done:
                left = end - time.monotonic()
                if left <= 0:
                    st.stalls += 1
                    break
                st.cv.wait(left)
    relay_frames(target, client, held)


def main():
    lport, tport = int(sys.argv[1]), int(sys.argv[2])
    hold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
    client, _ = listen_port(lport, 1).accept()
    target = connect_target(client, tport)
    st = State()
    up = threading.Thread(target=upstream, args=(client, target, st))
    down = threading.Thread(target=downstream,
                            args=(target, client, st, hold))
    up.start()
    down.start()
    up.join()
    down.join()
    print("PRESERVE %d stalls %d" % (st.count, st.stalls))


if __name__ == "__main__":
    main()
