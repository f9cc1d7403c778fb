#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# delay_proxy.py -- a slow link for tests: forwards TCP connections from
# LISTEN_PORT to TARGET_PORT on loopback (relay.py), holding every chunk
# of the client-to-target stream for DELAY_MS before sending it on, in
# order; replies pass at once. A client that returns before its target
# acknowledged its data returns while the data is still here.
#
# usage: delay_proxy.py LISTEN_PORT TARGET_PORT DELAY_MS
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relay  # noqa: E402


def delayer(ms):
    """a tap that holds each chunk for ms milliseconds"""
    def tap(data):
        time.sleep(ms / 1000.0)
        return data
    return tap


def main():
    lport, tport, ms = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    relay.serve(lport, tport, taps=lambda: (delayer(ms), None),
                ready=lambda: print("ready", flush=True))


if __name__ == "__main__":
    main()
