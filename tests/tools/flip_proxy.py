#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# flip_proxy.py -- a man in the middle for tests: forwards one TCP
# connection at a time from LISTEN_PORT to TARGET_PORT on loopback and
# flips one bit of the client-to-target stream at byte offset AT
# (counted per connection); prints "flipped" to stderr when it did.
#
# usage: flip_proxy.py LISTEN_PORT TARGET_PORT AT
import socket
import sys
import threading


def pump(src, dst, flip_at):
    seen = 0
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if flip_at is not None and seen <= flip_at < seen + len(data):
                b = bytearray(data)
                b[flip_at - seen] ^= 0x01
                data = bytes(b)
                print("flipped", file=sys.stderr, flush=True)
            seen += len(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    lport, tport, at = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", lport))
    ls.listen(8)
    print("ready", flush=True)
    while True:
        c, _ = ls.accept()
        t = socket.create_connection(("127.0.0.1", tport))
        threading.Thread(target=pump, args=(c, t, at), daemon=True).start()
        threading.Thread(target=pump, args=(t, c, None), daemon=True).start()


if __name__ == "__main__":
    main()
