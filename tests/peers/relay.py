# SPDX-License-Identifier: BSD-3-Clause
# relay.py -- the TCP relay of the test peers that sit between rpmemctl
# and rpmemd (tests/peers/flip_proxy.py, tests/peers/impostor.py,
# tests/fuzz/capture_seeds.py): listen on loopback, connect upstream for
# each connection, pump the bytes both ways, one thread per direction,
# each direction through an optional tap that sees (and may change) them.
# A peer in tests/peers imports it as it is (import relay); from another
# folder, as tests/fuzz/capture_seeds.py does:
#     sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
#     import relay
"""A loopback TCP relay with taps, for Python test peers."""
import socket
import ssl
import threading


def listen(port, backlog=16):
    """a listening socket on 127.0.0.1:port"""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(backlog)
    return ls


def _shut(s):
    try:
        s.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass


def pump(src, dst, tap=None, chunk=65536):
    """copy src to dst (None: only tap) until either end closes; tap(data)
    returns the bytes to send on; then shut both down, which ends the
    other direction too"""
    try:
        while True:
            data = src.recv(chunk)
            if not data:
                break
            if tap:
                data = tap(data)
            if dst:
                dst.sendall(data)
    except (OSError, ssl.SSLError):
        pass
    finally:
        _shut(src)
        if dst:
            _shut(dst)


def start(fn, *args):
    """fn(*args) in a daemon thread"""
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


def splice(down, up, tap_up=None, tap_down=None):
    """pump down -> up through tap_up and up -> down through tap_down, each
    in its own thread; returns at once"""
    start(pump, down, up, tap_up)
    start(pump, up, down, tap_down)


def serve(port, upstream, taps=None, ready=None, backlog=16, pump_up=None):
    """accept on port forever, relaying each connection to 127.0.0.1:
    upstream; taps() gives the (tap_up, tap_down) of a new connection;
    pump_up(down, up), if given, copies down -> up in place of a tapped
    pump (its own thread); ready() is called once listening"""
    ls = listen(port, backlog)
    if ready:
        ready()
    while True:
        c, _ = ls.accept()
        u = socket.create_connection(("127.0.0.1", upstream))
        if pump_up:
            start(pump_up, c, u)
            start(pump, u, c)
        else:
            splice(c, u, *(taps() if taps else (None, None)))
