#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# delay_proxy.py -- a slow link for tests and benchmarks: forwards TCP
# connections from LISTEN_PORT to TARGET_PORT on loopback, and delivers
# every chunk of the client-to-target stream DELAY_MS after it arrived,
# in order; replies pass at once. The link is a delay line, not a
# bottleneck: chunks that arrive together leave together, a later chunk
# does not wait for an earlier one's delay to start (a pipelined client
# sees one DELAY_MS per round trip, not one per message). A client that
# returns before its target acknowledged its data returns while the data
# is still here. DELAY_MS may be a fraction (0.2).
#
# usage: delay_proxy.py LISTEN_PORT TARGET_PORT DELAY_MS
import os
import queue
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relay  # noqa: E402


def delayed(src, dst, delay):
    """copy src to dst, each chunk delay seconds after it arrived: a
    reader stamps and queues, a sender sleeps until a chunk is due; small
    frames leave at once both ways (no Nagle around the delay)"""
    for s in (src, dst):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    q = queue.SimpleQueue()

    def send():
        try:
            while True:
                due, data = q.get()
                if data is None:
                    break
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            relay._shut(dst)
            relay._shut(src)

    relay.start(send)
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            q.put((time.monotonic() + delay, data))
    except OSError:
        pass
    q.put((0, None))


def main():
    lport, tport = int(sys.argv[1]), int(sys.argv[2])
    delay = float(sys.argv[3]) / 1000.0
    relay.serve(lport, tport, pump_up=lambda c, u: delayed(c, u, delay),
                ready=lambda: print("ready", flush=True))


if __name__ == "__main__":
    main()
