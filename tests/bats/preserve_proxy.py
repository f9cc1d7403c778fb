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
import socket
import struct
import sys
import threading
import time

MAGIC = b"RPMM"
HDR = 16
OK = 4
PRESERVE = 28


def read_frame(sock):
    """one frame (header and payload) from sock, or None at its end"""
    buf = b""
    while len(buf) < HDR:
        chunk = sock.recv(HDR - len(buf))
        if not chunk:
            return None
        buf += chunk
    if buf[:4] != MAGIC:
        raise ValueError("not an rpmem frame")
    ftype, _flags, fid, flen = struct.unpack("<HHII", buf[4:HDR])
    while len(buf) < HDR + flen:
        chunk = sock.recv(min(1 << 20, HDR + flen - len(buf)))
        if not chunk:
            return None
        buf += chunk
    return ftype, fid, buf


def relay_frames(src, dst, on_frame):
    """frames from src to dst, each passed to on_frame(ftype, fid, frame)
    before it is sent on (which may hold it); dst's sending side shut at
    src's end"""
    while True:
        f = read_frame(src)
        if f is None:
            break
        ftype, fid, buf = f
        on_frame(ftype, fid, buf)
        dst.sendall(buf)
    dst.shutdown(socket.SHUT_WR)


def listen_port(lport, backlog):
    """a listening socket on 127.0.0.1:lport (0: one the system chooses),
    its port printed as "PORT P" """
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", lport))
    ls.listen(backlog)
    print("PORT %d" % ls.getsockname()[1], flush=True)
    return ls


def connect_target(client, tport):
    """the connection to the target at 127.0.0.1:tport for client, both
    without Nagle's delay"""
    target = socket.create_connection(("127.0.0.1", tport))
    for s in (client, target):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return target


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
