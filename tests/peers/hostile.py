#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# hostile.py -- hostile and slow rpmem peers for the BATS suites and the bench
"""Usage: hostile.py PORT COMMAND [ARGS]

  hello [SRC]             HELLO (from source address SRC); print
                          "HELLO_OK" or the ERROR
  trickle INTERVAL [SRC]  send HELLO one byte every INTERVAL s (from
                          source address SRC); print "closed after S s"
                          and the ERROR the target sent, once closed
  stall-write POOL        HELLO, open r1/POOL read-write, send a WRITE
                          header and half its data, then wait; print the
                          session id, then what the target says on close
  idle-writer POOL        HELLO, open r1/POOL read-write, wait; as above
  stall-live-write POOL SOURCE
                          HELLO, open r1/POOL read-write, SET_STATE
                          syncing with SOURCE (a live one: "... (live)"),
                          send a WRITE header and half its data, then
                          wait; print "stalled", then what the target
                          says on close
  hash POOL BS N FLAGS    HELLO, open r1/POOL, one HASH of N blocks of BS
                          from offset 0 with FLAGS; print each hash (16 hex
                          digits a line) or "ERROR code msg"
  hashv POOL BS N         HELLO, open r1/POOL, one HASHV of N ranges that
                          each cover the pool in blocks of BS; print the
                          reply ("HASHES n" or "ERROR code msg")
  create POOL SIZE        HELLO, CREATE r1/POOL of SIZE bytes (any u64, as
                          no rpmemctl sends it); print "OK" or the ERROR
  idle SRC                connect from source address SRC, send nothing;
                          print "open", then "closed" when the target
                          closes
  stall-proxy LPORT SRC   relay one client on 127.0.0.1:LPORT to the
                          target from source address SRC: its first
                          flight (a TLS ClientHello) passes, what it sends
                          after the target's answer is held (the target
                          waits in mid-handshake); print "ready", then
                          "holding"; once the target closes, pass on what
                          it sent last and close the client
  tls-trickle CA CERT KEY INTERVAL
                          a TLS handshake with the client certificate
                          CERT (key KEY, the target's checked against CA),
                          then the HELLO's record one byte every INTERVAL
                          s; print "closed after S s" once the target
                          closes
  bad-writes N            HELLO, then N times a WRITE to a handle never
                          opened and the FLUSH that reports it; print
                          "refused K of N" (the FLUSHes answered ERROR)
  flood [--tls] N SRC...  hold N connections from the source addresses
                          SRC (round robin): a third idle, a third
                          trickling HELLO (a byte a second), a third
                          sending garbage (7 bytes a second); with --tls
                          a quarter each, the trickle of a ClientHello,
                          and a quarter TLS clients the target refuses
                          (no credentials it accepts); open a new one
                          whenever the target closes one; run until
                          killed; print "open N" once all are up
  garbage N [SRC]         N connections one after the other: 9 bytes
                          (a TLS handshake record's type, then junk),
                          150 ms, close; print "sent N"
  raw-sync POOL SOURCE OFF
                          HELLO, open r1/POOL read-write, SET_STATE
                          syncing with SOURCE, one WRITE of 4 KiB of 0x5a
                          at OFF with no PRESERVE before it (a client that
                          knows nothing of undo journals), FLUSH; print
                          "OK" or the ERROR; the pool is left syncing
  says-less REGION POOL CHANGE
                          HELLO, open REGION/POOL read-write, SET_STATE
                          syncing saying the sync will write CHANGE bytes
                          (RPMEM_SET_STATE_CHANGE), then one PRESERVE of
                          the whole pool, WRITEs of all of it (0x5a) and a
                          FLUSH (a client that says less than it writes);
                          print "OK" or the first ERROR
  no-size REGION POOL     HELLO, open REGION/POOL read-write, SET_STATE
                          syncing saying nothing of the sync's size (an
                          older client), one PRESERVE of the whole pool,
                          WRITEs of all of it (0x5a), FLUSH, SET_STATE
                          consistent; print "OK" or the first ERROR
  hold-sync REGION POOL CHANGE
                          HELLO, open REGION/POOL read-write, SET_STATE
                          syncing saying the sync will write CHANGE bytes;
                          print "syncing" (or the ERROR) and wait, the
                          sync under way, until killed
  dense-write POOL OFF LEN [FILL]
                          HELLO, open r1/POOL (or REGION/POOL)
                          read-write, SET_STATE syncing saying the sync
                          will write the whole pool (a dense sync), (with
                          FILL: fill the file system of the path FILL with
                          zeros,) one WRITE of LEN bytes of 0x5a at OFF
                          (any alignment) and nothing else, FLUSH,
                          SET_STATE consistent; print "OK" or the first
                          ERROR
  dense-shared POOL
                          HELLO, open r1/POOL read-write, SET_STATE
                          syncing saying the whole pool will be written,
                          one WRITE of 4 KiB at 0 and FLUSH; a second
                          session opens it read-only; the first asks for
                          a rollback, then again once the second closed;
                          print both answers ("OK" or the ERROR)
  preserve POOL MODE OFF LEN
                          HELLO, open r1/POOL (MODE rw or ro), one
                          PRESERVE of LEN bytes at OFF (any u64s); print
                          "OK" or the ERROR
  gen POOL MODE OP FLAGS [ID...]
                          HELLO, open r1/POOL (MODE rw or ro), one GEN of
                          OP with FLAGS and the ids (16 hex digits each;
                          any op may carry them); print "GEN_REPLY role
                          state count ids..." or the ERROR
  linger N WHAT MAX [SRC] open N connections (from SRC), send WHAT on
                          each ("silent": nothing, "byte": one byte of a
                          HELLO, "hello-part": a HELLO but its last byte,
                          "tls-byte": one byte of a TLS record, "tls-part":
                          a partial ClientHello), then read until the
                          target closes each; print "closed K of N, the
                          last after S s" (after MAX s at most)
  silent N SRC            hold N connections from source address SRC
                          that send nothing; open a new one at once
                          whenever the target closes one; print "open N"
                          once all are up, then "reopened K" at each
                          reopening; run until killed
  spoof LPORT             a hostile target: relay each client on
                          127.0.0.1:LPORT to the target, and in what the
                          target answers put terminal controls in place
                          of markers of the same length (SPOOF below):
                          QQQQQQQQQQQQQQQQ (a path, source or pool name),
                          "hostile.py" (this script's client name, so a
                          writer) and "rpmemd 0" (the server string);
                          print "ready"; run until killed
"""
import os
import selectors
import socket
import ssl
import struct
import sys
import time

from rpmem_wire import (CREATE, ERROR, FLUSH, GEN, GEN_REPLY,
                        HASH, HASHES, HASHV,
                        HELLO, HELLO_OK, OK, OPEN, OPEN_OK, PRESERVE,
                        SET_STATE, WRITE,
                        connect, error_text, frame, recv_frame, wstr)
from rpmem_wire import hello_payload as _hello
from rpmem_wire import hello_session as _hello_session
import rpmem_wire as w
import relay


def hello_payload():
    return _hello("hostile.py")


def hello_session(port):
    """a connection past HELLO_OK and its session id (exit if refused)"""
    try:
        return _hello_session(port, "hostile.py")
    except RuntimeError as e:
        sys.exit(str(e))


def session(port, pool, region="r1"):
    """HELLO and OPEN region/pool read-write: (socket, sid, handle, size)"""
    s, sid = hello_session(port)
    s.sendall(frame(OPEN, 2, wstr(region) + wstr(pool) + bytes([1, 0])))
    t, _, p = recv_frame(s)
    if t != OPEN_OK:
        sys.exit("no OPEN_OK: " + error_text(p))
    handle, size = struct.unpack("<IQ", p[:12])
    return s, sid, handle, size


def wait_close(s, t0):
    """wait until the target closes s; print what it said and when"""
    said = ""
    try:
        while True:
            t, rid, p = recv_frame(s)
            if t == ERROR:
                said = " id %d %s" % (rid, error_text(p))
    except (ConnectionResetError, OSError):
        pass
    print("closed after %.1f s%s" % (time.monotonic() - t0, said), flush=True)


def cmd_hello(port, src=None):
    s = connect(port, src)
    s.sendall(frame(HELLO, 1, hello_payload()))
    t, _, p = recv_frame(s)
    print("HELLO_OK" if t == HELLO_OK else error_text(p))


def cmd_create(port, pool, size):
    s, _ = hello_session(port)
    payload = wstr("r1") + wstr(pool) + struct.pack("<Q", int(size))
    s.sendall(frame(CREATE, 2, payload))
    t, _, p = recv_frame(s)
    print("OK" if t == OK else error_text(p))


def cmd_trickle(port, interval, src=None):
    s = connect(port, src)
    t0 = time.monotonic()
    data = frame(HELLO, 1, hello_payload())
    s.settimeout(float(interval))
    got = b""
    for i in range(len(data) - 1):
        try:
            s.send(data[i : i + 1])
        except OSError:
            break
        try:
            c = s.recv(4096)
            got += c
            if not c:
                break
        except socket.timeout:
            continue
        except OSError:
            break
    said = ""
    if len(got) >= 16 and struct.unpack("<IHHII", got[:16])[1] == ERROR:
        said = " " + error_text(got[16:])
    print("closed after %.1f s%s" % (time.monotonic() - t0, said), flush=True)


def cmd_stall_write(port, pool):
    s, sid, handle, _ = session(port, pool)
    n = 1 << 20
    whole = frame(WRITE, 3, struct.pack("<IQI", handle, 0, n) + bytes(n))
    s.sendall(whole[: 16 + 16 + n // 2])
    print("session %d" % sid, flush=True)
    wait_close(s, time.monotonic())


def cmd_stall_live_write(port, pool, source):
    s, _, handle, _ = session(port, pool)
    s.sendall(frame(SET_STATE, 3, struct.pack("<IB", handle, 1) +
                    wstr(source)))
    t, _, p = recv_frame(s)
    if t != OK:
        print(error_text(p), flush=True)
        return
    n = 1 << 20
    whole = frame(WRITE, 4, struct.pack("<IQI", handle, 0, n) + bytes(n))
    s.sendall(whole[: 16 + 16 + n // 2])
    print("stalled", flush=True)
    wait_close(s, time.monotonic())


def cmd_idle_writer(port, pool):
    s, sid, _, _ = session(port, pool)
    print("session %d" % sid, flush=True)
    wait_close(s, time.monotonic())


def cmd_hash(port, pool, bs, n, flags):
    s, _, handle, _ = session(port, pool)
    bs, n, flags = int(bs), int(n), int(flags)
    body = struct.pack("<IQIII", handle, 0, bs, n, flags)
    s.sendall(frame(HASH, 3, body))
    t, _, p = recv_frame(s)
    if t != HASHES:
        print(error_text(p))
        return
    count = struct.unpack("<I", p[:4])[0]
    for h in struct.unpack("<%dQ" % count, p[4 : 4 + 8 * count]):
        print("%016x" % h)


def cmd_hashv(port, pool, bs, n):
    s, _, handle, _ = session(port, pool)
    bs, n = int(bs), int(n)
    body = struct.pack("<III", handle, bs, n) + struct.pack("<QI", 0, 1) * n
    t0 = time.monotonic()
    s.sendall(frame(HASHV, 3, body))
    t, _, p = recv_frame(s)
    dt = time.monotonic() - t0
    if t == HASHES:
        print("HASHES %d in %.2f s" % (struct.unpack("<I", p[:4])[0], dt))
    else:
        print(error_text(p))


def cmd_raw_sync(port, pool, source, off):
    s, _, handle, _ = session(port, pool)
    off = int(off)
    s.sendall(frame(SET_STATE, 3, struct.pack("<IB", handle, 1) +
                    wstr(source)))
    t, _, p = recv_frame(s)
    if t != OK:
        print(error_text(p))
        return
    n = 4096
    s.sendall(frame(WRITE, 4, struct.pack("<IQI", handle, off, n) +
                    b"\x5a" * n))
    s.sendall(frame(FLUSH, 5, struct.pack("<IQQ", handle, off, n)))
    t, _, p = recv_frame(s)
    print("OK" if t == OK else error_text(p))


def cmd_says_less(port, region, pool, change):
    s, _, handle, size = session(port, pool, region)
    s.sendall(frame(SET_STATE, 3, struct.pack("<IB", handle, 1) +
                    wstr("says-less") + struct.pack("<IQ", 1 << 2,
                                                    int(change))))
    t, _, p = recv_frame(s)
    if t != OK:
        print(error_text(p))
        return
    s.sendall(frame(PRESERVE, 4, struct.pack("<IIQQ", handle, 1, 0, size)))
    t, _, p = recv_frame(s)
    if t != OK:
        print(error_text(p))
        return
    n = 1 << 20
    for off in range(0, size, n):
        s.sendall(frame(WRITE, 5, struct.pack("<IQI", handle, off, n) +
                        b"\x5a" * n))
    s.sendall(frame(FLUSH, 6, struct.pack("<IQQ", handle, 0, size)))
    t, _, p = recv_frame(s)
    print("OK" if t == OK else error_text(p))


def cmd_no_size(port, region, pool):
    s, _, handle, size = session(port, pool, region)
    steps = [(SET_STATE, struct.pack("<IB", handle, 1) + wstr("no-size")),
             (PRESERVE, struct.pack("<IIQQ", handle, 1, 0, size))]
    for rid, (t, payload) in enumerate(steps, 3):
        s.sendall(frame(t, rid, payload))
        t, _, p = recv_frame(s)
        if t != OK:
            print(error_text(p))
            return
    n = 1 << 20
    for off in range(0, size, n):
        s.sendall(frame(WRITE, 5, struct.pack("<IQI", handle, off, n) +
                        b"\x5a" * n))
    s.sendall(frame(FLUSH, 6, struct.pack("<IQQ", handle, 0, size)))
    t, _, p = recv_frame(s)
    if t != OK:
        print(error_text(p))
        return
    s.sendall(frame(SET_STATE, 7, struct.pack("<IB", handle, 2) +
                    wstr("no-size")))
    t, _, p = recv_frame(s)
    print("OK" if t == OK else error_text(p))


def cmd_hold_sync(port, region, pool, change):
    s, _, handle, _ = session(port, pool, region)
    s.sendall(frame(SET_STATE, 3, struct.pack("<IB", handle, 1) +
                    wstr("hold-sync") + struct.pack("<IQ", 1 << 2,
                                                    int(change))))
    t, _, p = recv_frame(s)
    print("syncing" if t == OK else error_text(p), flush=True)
    while True:
        time.sleep(60)


def fill_fs(path):
    """write zeros into path until its file system is full"""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass


def cmd_dense_write(port, pool, off, n, fill=None):
    region, pool = pool.split("/") if "/" in pool else ("r1", pool)
    s, _, handle, size = session(port, pool, region)
    off, n = int(off), int(n)
    s.sendall(frame(SET_STATE, 3, struct.pack("<IB", handle, 1) +
                    wstr("dense-write") + struct.pack("<IQ", 1 << 2, size)))
    t, _, p = recv_frame(s)
    if t != OK:
        print(error_text(p))
        return
    if fill:
        fill_fs(fill)
    s.sendall(frame(WRITE, 4, struct.pack("<IQI", handle, off, n) +
                    b"\x5a" * n))
    s.sendall(frame(FLUSH, 5, struct.pack("<IQQ", handle, off, n)))
    t, _, p = recv_frame(s)
    if t != OK:
        print(error_text(p))
        return
    s.sendall(frame(SET_STATE, 6, struct.pack("<IB", handle, 2) +
                    wstr("dense-write")))
    t, _, p = recv_frame(s)
    print("OK" if t == OK else error_text(p))


def rollback(s, handle, rid):
    """SET_STATE consistent with RPMEM_SET_STATE_ROLLBACK: "OK" or ERROR"""
    s.sendall(frame(SET_STATE, rid, struct.pack("<IB", handle, 2) +
                    wstr("") + struct.pack("<I", 1 << 1)))
    t, _, p = recv_frame(s)
    return "OK" if t == OK else error_text(p)


def cmd_dense_shared(port, pool):
    s, _, handle, size = session(port, pool)
    s.sendall(frame(SET_STATE, 3, struct.pack("<IB", handle, 1) +
                    wstr("dense-shared") + struct.pack("<IQ", 1 << 2, size)))
    t, _, p = recv_frame(s)
    if t != OK:
        print(error_text(p))
        return
    s.sendall(frame(WRITE, 4, struct.pack("<IQI", handle, 0, 4096) +
                    b"\x5a" * 4096))
    s.sendall(frame(FLUSH, 5, struct.pack("<IQQ", handle, 0, 4096)))
    recv_frame(s)
    r, _ = hello_session(port)
    r.sendall(frame(OPEN, 2, wstr("r1") + wstr(pool) + bytes([0, 0])))
    t, _, p = recv_frame(r)
    if t != OPEN_OK:
        sys.exit("no OPEN_OK: " + error_text(p))
    print(rollback(s, handle, 6))
    r.close()
    time.sleep(0.5)
    print(rollback(s, handle, 7))


def cmd_preserve(port, pool, mode, off, n):
    s, _ = hello_session(port)
    s.sendall(frame(OPEN, 2, wstr("r1") + wstr(pool) +
                    bytes([1 if mode == "rw" else 0, 0])))
    t, _, p = recv_frame(s)
    if t != OPEN_OK:
        sys.exit("no OPEN_OK: " + error_text(p))
    handle = struct.unpack("<I", p[:4])[0]
    body = struct.pack("<II", handle, 1) + struct.pack("<QQ", int(off),
                                                        int(n))
    s.sendall(frame(PRESERVE, 3, body))
    t, _, p = recv_frame(s)
    print("OK" if t == OK else error_text(p))


def cmd_gen(port, pool, mode, op, flags, *ids):
    s, _ = hello_session(port)
    s.sendall(frame(OPEN, 2, wstr("r1") + wstr(pool) +
                    bytes([1 if mode == "rw" else 0, 0])))
    t, _, p = recv_frame(s)
    if t != OPEN_OK:
        sys.exit("no OPEN_OK: " + error_text(p))
    handle = struct.unpack("<I", p[:4])[0]
    body = struct.pack("<IBIB", handle, int(op), int(flags), len(ids))
    body += b"".join(struct.pack("<Q", int(i, 16)) for i in ids)
    s.sendall(frame(GEN, 3, body))
    t, _, p = recv_frame(s)
    if t != GEN_REPLY:
        print(error_text(p))
        return
    role, state, _, _, _, n = struct.unpack("<BBQQBB", p[:20])
    got = struct.unpack("<%dQ" % n, p[20:20 + 8 * n])
    print("GEN_REPLY %d %d %d %s" % (role, state, n,
                                    " ".join("%016x" % i for i in got)))


def cmd_bad_writes(port, n):
    s, _ = hello_session(port)
    n, refused, batch = int(n), 0, 100
    for first in range(0, n, batch):
        k = min(batch, n - first)
        out = b""
        for i in range(k):
            rid = 2 + 2 * (first + i)
            out += frame(WRITE, rid, struct.pack("<IQI", 999, 0, 8) + bytes(8))
            out += frame(FLUSH, rid + 1, struct.pack("<IQQ", 999, 0, 8))
        s.sendall(out)
        for i in range(k):
            t, _, p = recv_frame(s)
            refused += t == ERROR
    print("refused %d of %d" % (refused, n), flush=True)


def wrong_tls(s):
    """s as a TLS client that offers no credentials the target accepts"""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    t = ctx.wrap_socket(s, do_handshake_on_connect=False)
    return t if tls_step(t) else None


def tls_step(t):
    """advance t's handshake; False once it failed (the target refused)"""
    try:
        t.do_handshake()
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
        pass
    except OSError:
        return False
    return True


def flood_read(s, kind):
    """s is readable: False once the target closed it"""
    try:
        if kind == 3:
            s.do_handshake()  # nothing once done
        return bool(s.recv(65536))
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return True
    except OSError:
        return False


def cmd_flood(port, n, srcs, tls=False):
    n = int(n)
    sel = selectors.DefaultSelector()
    kinds = 4 if tls else 3
    # with TLS a trickle is of a ClientHello, without of a HELLO
    trickle = client_hello_part() if tls else frame(HELLO, 1, hello_payload())
    state = {}  # socket -> [kind, bytes sent]
    k = 0

    def open_one():
        nonlocal k
        kind = k % kinds
        src = srcs[k % len(srcs)]
        k += 1
        try:
            s = connect(port, src)
        except OSError:
            return False
        s.setblocking(False)
        if kind == 3:
            s = wrong_tls(s)
            if not s:
                return True
        state[s] = [kind, 0]
        sel.register(s, selectors.EVENT_READ)
        return True

    while len(state) < n:
        if not open_one():
            time.sleep(0.01)
    print("open %d" % len(state), flush=True)
    last = time.monotonic()
    while True:
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            if flood_read(s, state[s][0]):
                continue
            sel.unregister(s)
            s.close()
            del state[s]
            # the attacker comes straight back
            open_one()
        now = time.monotonic()
        if now - last >= 1.0:
            last = now
            for s, st in list(state.items()):
                try:
                    if st[0] == 1 and st[1] < len(trickle) - 1:
                        s.send(trickle[st[1] : st[1] + 1])
                        st[1] += 1
                    elif st[0] == 2:
                        s.send(os.urandom(7))
                except OSError:
                    pass
            while len(state) < n and open_one():
                pass


def cmd_silent(port, n, src):
    sel = selectors.DefaultSelector()
    for _ in range(int(n)):
        sel.register(connect(port, src), selectors.EVENT_READ)
    print("open %s" % n, flush=True)
    k = 0
    while True:
        for key, _ in sel.select():
            s = key.fileobj
            try:
                if s.recv(65536):
                    continue
            except OSError:
                pass
            sel.unregister(s)
            s.close()
            sel.register(connect(port, src), selectors.EVENT_READ)
            k += 1
            print("reopened %d" % k, flush=True)


def cmd_idle(port, src):
    s = connect(port, src)
    print("open", flush=True)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    print("closed", flush=True)


def cmd_stall_proxy(port, lport, src):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(lport)))
    ls.listen(1)
    print("ready", flush=True)
    c, _ = ls.accept()
    t = connect(port, src)
    t.sendall(c.recv(65536))  # the ClientHello
    held = False
    sel = selectors.DefaultSelector()
    sel.register(c, selectors.EVENT_READ)
    sel.register(t, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            b = key.fileobj.recv(65536)
            if key.fileobj is t:
                if not b:
                    c.shutdown(socket.SHUT_WR)
                    time.sleep(1)
                    return
                c.sendall(b)
            elif b and not held:
                held = True
                print("holding", flush=True)
            elif not b:
                sel.unregister(c)


def cmd_garbage(port, n, src=None):
    for _ in range(int(n)):
        s = connect(port, src)
        s.sendall(b"\x16garbage!")
        time.sleep(0.15)
        s.close()
    print("sent %d" % int(n), flush=True)


def client_hello_part():
    """a TLS record header announcing a 512-byte ClientHello, and 40 of it"""
    body = b"\x01\x00\x01\xfc\x03\x03" + os.urandom(34)
    return b"\x16\x03\x01\x02\x00" + body


def linger_bytes(what):
    hello = frame(HELLO, 1, hello_payload())
    return {"silent": b"", "byte": hello[:1], "hello-part": hello[:-1],
            "tls-byte": b"\x16", "tls-part": client_hello_part()}[what]


def cmd_linger(port, n, what, most, src=None):
    n, most = int(n), float(most)
    data = linger_bytes(what)
    socks = []
    t0 = time.monotonic()
    for _ in range(n):
        s = connect(port, src)
        if data:
            s.sendall(data)
        socks.append(s)
    sel = selectors.DefaultSelector()
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    closed, last = 0, 0.0
    while closed < n and time.monotonic() - t0 < most:
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            try:
                if s.recv(65536):
                    continue
            except BlockingIOError:
                continue
            except OSError:
                pass
            sel.unregister(s)
            s.close()
            closed += 1
            last = time.monotonic() - t0
    print("closed %d of %d, the last after %.1f s" % (closed, n, last),
          flush=True)


def cmd_tls_trickle(port, ca, cert, key, interval):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    ctx.load_cert_chain(cert, key)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    s = connect(port)
    t0 = time.monotonic()
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            s.sendall(out.read())
            got = s.recv(65536)
            if not got:
                sys.exit("the target closed during the TLS handshake")
            inc.write(got)
    s.sendall(out.read())
    obj.write(frame(HELLO, 1, hello_payload()))
    record = out.read()
    s.settimeout(float(interval))
    for i in range(len(record) - 1):
        try:
            s.send(record[i : i + 1])
            if not s.recv(65536):
                break
        except socket.timeout:
            continue
        except OSError:
            break
    print("closed after %.1f s" % (time.monotonic() - t0), flush=True)


# what spoof puts in place of each marker: ESC sequences (clear, an OSC
# title, SGR), C1 CSI and OSC, bidi overrides and isolates, a newline
# and a forged message line; each of the marker's length
SPOOF = {
    b"Q" * 16: b"\x1b[2J\x1b]0;x\x07\xc2\x9b\xe2\x80\xae\n",
    b"hostile.py": b"\x1b[2J\xc2\x9d\xe2\x81\xa6\r",
    b"rpmemd 0": b"\x1b]0;x\x07\xc2\x9b",
}
assert all(len(k) == len(v) for k, v in SPOOF.items())


def spoof_pump(up, down):
    """the target's frames to the client, markers replaced"""
    try:
        while True:
            hdr = w.recv_full(up, w.HDR_SIZE)
            payload = w.recv_full(up, w.HDR.unpack(hdr)[4])
            for k, v in SPOOF.items():
                payload = payload.replace(k, v)
            down.sendall(hdr + payload)
    except (OSError, ConnectionResetError):
        pass
    finally:
        for x in (up, down):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def cmd_spoof(port, lport):
    ls = relay.listen(int(lport))
    print("ready", flush=True)
    while True:
        c, _ = ls.accept()
        u = socket.create_connection(("127.0.0.1", port))
        relay.start(relay.pump, c, u)
        relay.start(spoof_pump, u, c)


# the commands, by the name the tests give them; each takes the port,
# then its own arguments
COMMANDS = {
    "hello": cmd_hello,
    "trickle": cmd_trickle,
    "stall-write": cmd_stall_write,
    "stall-live-write": cmd_stall_live_write,
    "idle-writer": cmd_idle_writer,
    "hash": cmd_hash,
    "hashv": cmd_hashv,
    "create": cmd_create,
    "idle": cmd_idle,
    "stall-proxy": cmd_stall_proxy,
    "tls-trickle": cmd_tls_trickle,
    "garbage": cmd_garbage,
    "linger": cmd_linger,
    "preserve": cmd_preserve,
    "dense-write": cmd_dense_write,
    "dense-shared": cmd_dense_shared,
    "no-size": cmd_no_size,
    "hold-sync": cmd_hold_sync,
    "says-less": cmd_says_less,
    "raw-sync": cmd_raw_sync,
    "gen": cmd_gen,
    "bad-writes": cmd_bad_writes,
    "silent": cmd_silent,
    "spoof": cmd_spoof,
}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    port, cmd, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    if cmd == "flood":
        tls = bool(args) and args[0] == "--tls"
        args = args[1:] if tls else args
        cmd_flood(port, args[0], args[1:], tls=tls)
    elif cmd in COMMANDS:
        COMMANDS[cmd](port, *args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
