#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# impostor.py -- a fake TLS target for the BATS suites: it knows no PSK
"""Usage: impostor.py PORT CERT KEY CAPTURE [UPSTREAM_PORT]

Listens on 127.0.0.1:PORT as a TLS 1.3 server with CERT and KEY (any
certificate: self-signed, signed for another name, a client's). It has no
pre-shared key: a client offering one gets a certificate handshake
instead. Prints "ready" once listening, then for each connection
"handshake ok" or "handshake failed: WHY" on stderr. After a handshake it
appends every byte the client sends to CAPTURE and, with UPSTREAM_PORT,
relays the session (tests/peers/relay.py) to a plaintext rpmemd on
127.0.0.1:UPSTREAM_PORT (so a client that accepts it really mirrors to,
and pulls from, the impostor's pool). Runs until killed.
"""
import socket
import ssl
import sys

import relay


def capturer(capture):
    """a tap appending what the client sends to the file capture"""
    def tap(b):
        with open(capture, "ab") as f:
            f.write(b)
        return b
    return tap


def serve(conn, ctx, capture, upstream):
    try:
        t = ctx.wrap_socket(conn, server_side=True)
    except (OSError, ssl.SSLError) as e:
        print("handshake failed: %s" % e, file=sys.stderr, flush=True)
        conn.close()
        return
    print("handshake ok", file=sys.stderr, flush=True)
    u = None
    if upstream:
        u = socket.create_connection(("127.0.0.1", upstream))
        relay.start(relay.pump, u, t)
    relay.pump(t, u, capturer(capture))


def main():
    port, cert, key, capture = sys.argv[1:5]
    upstream = int(sys.argv[5]) if len(sys.argv) > 5 else None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    open(capture, "wb").close()
    ls = relay.listen(int(port))
    print("ready", flush=True)
    while True:
        c, _ = ls.accept()
        relay.start(serve, c, ctx, capture, upstream)


if __name__ == "__main__":
    main()
