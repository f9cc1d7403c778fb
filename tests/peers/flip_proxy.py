#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# flip_proxy.py -- a man in the middle for tests: forwards TCP
# connections from LISTEN_PORT to TARGET_PORT on loopback (relay.py) and
# flips one bit of the client-to-target stream at byte offset AT
# (counted per connection); prints "flipped" to stderr when it did.
#
# usage: flip_proxy.py LISTEN_PORT TARGET_PORT AT
import sys

import relay


def flipper(at):
    """a tap flipping bit 0 of byte AT of its stream"""
    seen = 0

    def tap(data):
        nonlocal seen
        if seen <= at < seen + len(data):
            b = bytearray(data)
            b[at - seen] ^= 0x01
            data = bytes(b)
            print("flipped", file=sys.stderr, flush=True)
        seen += len(data)
        return data
    return tap


def main():
    lport, tport, at = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    relay.serve(lport, tport, taps=lambda: (flipper(at), None),
                ready=lambda: print("ready", flush=True), backlog=8)


if __name__ == "__main__":
    main()
