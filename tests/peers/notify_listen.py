#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# notify_listen.py -- test tool: play systemd's end of NOTIFY_SOCKET
#
# Usage: notify_listen.py SOCKET LOG PORT
# Binds a unix datagram socket at SOCKET and appends every message to LOG
# as one line: "SECONDS MSG" (CLOCK_MONOTONIC seconds, the message's
# lines joined by " | "). A message with READY=1 is followed by
# " [port accepts]" or " [port refused]": whether 127.0.0.1:PORT took a
# connection at the moment READY=1 arrived.
import socket
import sys
import time


def port_accepts(port):
    """port_accepts -- whether 127.0.0.1:port takes a connection now"""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def main():
    path, log, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    with open(log, "a", buffering=1) as out:
        while True:
            msg = s.recv(4096).decode(errors="replace").strip("\n")
            line = "%.3f %s" % (time.monotonic(), msg.replace("\n", " | "))
            if "READY=1" in msg.split("\n"):
                ok = port_accepts(port)
                line += " [port accepts]" if ok else " [port refused]"
            out.write(line + "\n")


if __name__ == "__main__":
    main()
