#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# proto_poke.py -- send malformed frames to a running rpmemd and check it copes
"""Poke a running rpmemd with malformed and hostile frames.

Usage: proto_poke.py [--port PORT] [--region NAME] [--rounds N] [--seed S]

Every check expects a precise ERROR reply (or the connection closed after
a framing error) and that the daemon still serves a fresh session after
it. The region must exist and be writable; the pool 'poke-<pid>' is
created and removed. Exit status 0 if every check passed, 1 otherwise.
"""

import argparse
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'peers'))
import rpmem_wire as w  # noqa: E402

MAGIC = w.MAGIC
T = dict(w.MSG)
NAMES = w.NAMES
E_PROTO, E_VERSION, E_AUTH = w.E_PROTO, w.E_VERSION, w.E_AUTH
E_NOREGION, E_INVAL, E_RDONLY = w.E_NOREGION, w.E_INVAL, w.E_RDONLY
E_NOPOOL, E_BUSY = w.E_NOPOOL, w.E_BUSY

failures = 0


s16 = w.wstr


def hello(vmin=1, vmax=1, auth=0, client='proto_poke'):
    return w.hello_payload(client, vmin, vmax, auth)


class Conn:
    """one control connection; frames in, frames out"""

    def __init__(self, port, handshake=True):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=20)
        self.id = 0
        self.sid = None
        if handshake:
            typ, p = self.req(T['HELLO'], hello())
            if typ != 'HELLO_OK':
                raise RuntimeError('handshake refused')
            self.sid = struct.unpack_from('<I', p, 2)[0]

    def send(self, typ, payload=b'', magic=MAGIC, length=None):
        self.id += 1
        n = len(payload) if length is None else length
        self.s.sendall(w.frame(typ, self.id, payload, magic=magic,
                               length=n))
        return self.id

    def recv(self):
        try:
            typ, rid, p = w.recv_frame(self.s)
        except ConnectionResetError:
            raise EOFError
        return NAMES.get(typ, typ), rid, p

    def req(self, typ, payload=b'', **kw):
        sent = self.send(typ, payload, **kw)
        rtyp, rid, p = self.recv()
        if rid != sent:
            raise RuntimeError('reply id %d for request %d' % (rid, sent))
        return rtyp, p

    def closed(self):
        try:
            return self.s.recv(1) == b''
        except ConnectionResetError:
            return True

    def close(self):
        self.s.close()


def err_code(p):
    return struct.unpack_from('<I', p)[0] if len(p) >= 4 else None


def check(what, ok):
    global failures
    print('%s - %s' % ('ok' if ok else 'not ok', what))
    if not ok:
        failures += 1


def expect_error(what, reply, code):
    typ, p = reply
    check('%s (ERROR %d, got %s %s)' % (what, code, typ, err_code(p)),
          typ == 'ERROR' and err_code(p) == code)


def alive(port):
    try:
        c = Conn(port)
        typ, _ = c.req(T['LIST'], s16(''))
        c.close()
        return typ == 'LIST_REPLY'
    except (OSError, EOFError, RuntimeError):
        return False


def handshake_checks(port):
    c = Conn(port, handshake=False)
    expect_error('first frame not HELLO', c.req(T['LIST'], s16('')), E_PROTO)
    check('  and the connection is closed', c.closed())
    for what, payload, code in (
            ('no common version', hello(2, 9), E_VERSION),
            ('unknown auth method', hello(auth=7), E_AUTH),
            ('short HELLO', b'\1\0', E_PROTO),
            ('HELLO with ver_min > ver_max', hello(3, 1), E_PROTO),
            ('HELLO with trailing bytes', hello() + b'x', E_PROTO)):
        c = Conn(port, handshake=False)
        expect_error(what, c.req(T['HELLO'], payload), code)
        c.close()


def framing_checks(port):
    c = Conn(port)
    c.send(T['LIST'], s16(''), magic=0xDEADBEEF)
    expect_error('bad magic', c.recv()[::2], E_PROTO)
    check('  and the connection is closed', c.closed())
    c = Conn(port)
    c.send(T['LIST'], b'', length=(1 << 20) + 65)
    expect_error('oversize length', c.recv()[::2], E_PROTO)
    check('  and the connection is closed', c.closed())
    c = Conn(port)
    expect_error('unknown type', c.req(99, b'abc'), E_PROTO)
    expect_error('reply type from a client', c.req(T['OK']), E_PROTO)
    expect_error('second HELLO', c.req(T['HELLO'], hello()), E_PROTO)
    check('  the session goes on', c.req(T['LIST'], s16(''))[0] ==
          'LIST_REPLY')
    c.close()


def request_checks(port, region, pool):
    c = Conn(port)
    p = s16(region) + s16(pool)
    expect_error('short LIST', c.req(T['LIST'], b'\5'), E_PROTO)
    expect_error('string longer than its payload', c.req(T['LIST'],
                 b'\5\0ab'), E_PROTO)
    expect_error('unknown region', c.req(T['LIST'], s16('no-such')),
                 E_NOREGION)
    expect_error('path as a pool name', c.req(T['CREATE'], s16(region) +
                 s16('../etc') + struct.pack('<Q', 4096)), E_INVAL)
    expect_error('a pool name read as an option', c.req(T['CREATE'],
                 s16(region) + s16('-rf') + struct.pack('<Q', 4096)), E_INVAL)
    expect_error('bad open mode', c.req(T['OPEN'], p + b'\7\0'), E_PROTO)
    expect_error('unaligned size', c.req(T['CREATE'], p +
                 struct.pack('<Q', 1000)), E_INVAL)
    typ, _ = c.req(T['CREATE'], p + struct.pack('<Q', 1 << 20))
    check('create the test pool', typ == 'OK')
    typ, o = c.req(T['OPEN'], p + b'\1\0')
    check('open it rw', typ == 'OPEN_OK')
    h = struct.unpack_from('<I', o)[0]
    expect_error('READ offset + len overflows', c.req(T['READ'],
                 struct.pack('<IQI', h, 2**64 - 10, 100)), E_PROTO)
    expect_error('READ past the end', c.req(T['READ'],
                 struct.pack('<IQI', h, 1 << 20, 1)), E_INVAL)
    expect_error('FLUSH offset + len overflows', c.req(T['FLUSH'],
                 struct.pack('<IQQ', h, 2**64 - 1, 2)), E_PROTO)
    expect_error('HASH block size not a power of two', c.req(T['HASH'],
                 struct.pack('<IQII', h, 0, 1000, 1)), E_PROTO)
    expect_error('HASH past the end', c.req(T['HASH'],
                 struct.pack('<IQII', h, 0, 65536, 17)), E_INVAL)
    hashv_checks(c, h)
    scrub_checks(c, h)
    versions_checks(c, h)
    expect_error('SET_STATE empty -> consistent', c.req(T['SET_STATE'],
                 struct.pack('<IB', h, 2) + s16('')), E_INVAL)
    for what, frame, code in (
            ('WRITE shorter than its head', b'\1\2', E_PROTO),
            ('WRITE head and data disagree',
             struct.pack('<IQI', h, 0, 5) + b'abc', E_PROTO),
            ('WRITE offset + len overflows',
             struct.pack('<IQI', h, 2**64 - 2, 3) + b'abc', E_PROTO),
            ('WRITE past the end',
             struct.pack('<IQI', h, (1 << 20) - 1, 2) + b'ab', E_INVAL),
            ('WRITE to an unknown handle',
             struct.pack('<IQI', h + 99, 0, 2) + b'ab', E_INVAL)):
        c.send(T['WRITE'], frame)
        expect_error(what + ', reported by FLUSH', c.req(T['FLUSH'],
                     struct.pack('<IQQ', h, 0, 0)), code)
    # BARRIER has no reply: its failures come with the next FLUSH
    for what, frame, code in (
            ('BARRIER with a byte too many',
             struct.pack('<IQQ', h, 0, 1) + b'x', E_PROTO),
            ('BARRIER offset + len overflows',
             struct.pack('<IQQ', h, 2**64 - 1, 2), E_PROTO),
            ('BARRIER past the end',
             struct.pack('<IQQ', h, (1 << 20) - 1, 2), E_INVAL),
            ('BARRIER of an unknown handle',
             struct.pack('<IQQ', h + 99, 0, 2), E_INVAL),
            ('BARRIER of a pool that is not syncing',
             struct.pack('<IQQ', h, 0, 4096), E_INVAL)):
        c.send(T['BARRIER'], frame)
        expect_error(what + ', reported by FLUSH', c.req(T['FLUSH'],
                     struct.pack('<IQQ', h, 0, 0)), code)
    expect_error('FLUSH of a pool that is not syncing', c.req(T['FLUSH'],
                 struct.pack('<IQQ', h, 0, 4096)), E_INVAL)
    check('SET_STATE syncing', c.req(T['SET_STATE'],
          struct.pack('<IB', h, 1) + s16(''))[0] == 'OK')
    check('FLUSH after the errors is OK', c.req(T['FLUSH'],
          struct.pack('<IQQ', h, 0, 4096))[0] == 'OK')
    c.send(T['BARRIER'], struct.pack('<IQQ', h, 0, 4096))
    check('a BARRIER that succeeded leaves the next FLUSH OK',
          c.req(T['FLUSH'], struct.pack('<IQQ', h, 0, 0))[0] == 'OK')
    ro = Conn(port)
    typ, o = ro.req(T['OPEN'], p + b'\0\0')
    hr = struct.unpack_from('<I', o)[0]
    ro.send(T['WRITE'], struct.pack('<IQI', hr, 0, 2) + b'ab')
    expect_error('WRITE on a read-only open', ro.req(T['FLUSH'],
                 struct.pack('<IQQ', hr, 0, 0)), E_RDONLY)
    ro.close()
    c.req(T['CLOSE'], struct.pack('<I', h))
    # the read-only session's open is released when the daemon sees its
    # socket close, which may take a moment on a busy machine
    for _ in range(50):
        # the pool is syncing: removing it takes force (flag 1)
        typ = c.req(T['REMOVE'], p + b'\1\0\0\0')[0]
        if typ == 'OK':
            break
        time.sleep(0.05)
    check('remove the test pool', typ == 'OK')
    c.close()


def later_message_checks(port):
    """the messages added after version 1's first set: KICK, EVENTS,
    STATUS with flags, and those only a target may send"""
    c = Conn(port)
    u32 = struct.Struct('<I')
    for what, typ, payload, code in (
            ('short KICK', 'KICK', b'\1\0', E_PROTO),
            ('KICK with unknown flags', 'KICK',
             struct.pack('<II', 999999, 0x80), E_PROTO),
            ('KICK of no such session', 'KICK',
             struct.pack('<II', 999999, 0), E_INVAL),
            ('KICK of the asking session', 'KICK',
             struct.pack('<II', c.sid, 0), E_INVAL),
            ('short EVENTS', 'EVENTS', b'\1', E_PROTO),
            ('EVENTS with unknown flags', 'EVENTS', u32.pack(0x80), E_PROTO),
            ('short STATUS', 'STATUS', b'\1', E_PROTO),
            ('STATUS with unknown flags', 'STATUS',
             u32.pack(0x80) + s16(''), E_PROTO),
            ('STATE from a client', 'STATE', b'', E_PROTO),
            ('EVENT from a client', 'EVENT', b'', E_PROTO),
            ('SCRUB_REPLY from a client', 'SCRUB_REPLY', b'', E_PROTO),
            ('VERSIONS_REPLY from a client', 'VERSIONS_REPLY', b'', E_PROTO),
            ('short SCRUB', 'SCRUB', b'\1\0\0\0', E_PROTO),
            ('the reserved type 25', 25, b'', E_PROTO)):
        expect_error(what, c.req(T.get(typ, typ), payload), code)
    check('  the session goes on', c.req(T['LIST'], s16(''))[0] ==
          'LIST_REPLY')
    c.close()


def hashv(h, bs, ranges, nranges=None):
    """a HASHV payload: ranges is a list of (offset, count)"""
    n = len(ranges) if nranges is None else nranges
    return struct.pack('<III', h, bs, n) + b''.join(
        struct.pack('<QI', o, k) for o, k in ranges)


def hashv_checks(c, h):
    """HASHV on a 1 MiB pool: the same hashes as HASH, and strict limits"""
    ranges = [(0, 1), (65536, 3), (4096, 2), ((1 << 20) - 8192, 2)]
    typ, p = c.req(T['HASHV'], hashv(h, 4096, ranges))
    want = b''
    for o, k in ranges:
        _, q = c.req(T['HASH'], struct.pack('<IQII', h, o, 4096, k))
        want += q[4:]
    check('HASHV of 4 ranges = 4 HASH replies in request order',
          typ == 'HASHES' and p[:4] == struct.pack('<I', 8) and
          p[4:] == want)
    typ, p = c.req(T['HASHV'], hashv(h, 4096, [(0, 1)] * 340))
    check('HASHV of 340 ranges', typ == 'HASHES' and len(p) == 4 + 340 * 8)
    typ, p = c.req(T['HASHV'], hashv(h, 4096, [(0, 1), (1 << 20, 1)]))
    expect_error('HASHV range past the end', (typ, p), E_INVAL)
    check('  the error names the range (2 of 2)', b'range 2 of 2' in p)
    expect_error('HASHV of an unknown handle', c.req(T['HASHV'],
                 hashv(h + 99, 4096, [(0, 1)])), E_INVAL)
    for what, payload in (
            ('HASHV of 0 ranges', hashv(h, 4096, [])),
            ('HASHV of 341 ranges', hashv(h, 4096, [(0, 1)] * 341)),
            ('HASHV with a count of 0', hashv(h, 4096, [(0, 1), (0, 0)])),
            ('HASHV counts over 16384 in all',
             hashv(h, 512, [(0, 16000), (0, 385)])),
            ('HASHV counts that wrap 32 bits',
             hashv(h, 512, [(0, 1), (0, 2**32 - 1)])),
            ('HASHV block size not a power of two',
             hashv(h, 1000, [(0, 1)])),
            ('HASHV range offset + length overflows',
             hashv(h, 4096, [(2**64 - 4096, 2)])),
            ('HASHV with fewer ranges than announced',
             hashv(h, 4096, [(0, 1)], nranges=2)),
            ('HASHV with a partial range', hashv(h, 4096, [(0, 1)])[:-1])):
        expect_error(what, c.req(T['HASHV'], payload), E_PROTO)


def scrub_checks(c, h):
    """SCRUB of a 1 MiB pool this session holds open for writing"""
    sc = struct.Struct('<IQIQ')
    typ, p = c.req(T['SCRUB'], sc.pack(h, 0, 256, 0))
    check('SCRUB of the whole pool: a verdict for each of its 256 pieces',
          typ == 'SCRUB_REPLY' and len(p) == 13 + 256)
    check('  all unverified: the pool is open for writing (why 5)',
          p[0] == 5 and p[13:] == b'\2' * 256)
    expect_error('SCRUB past the end', c.req(T['SCRUB'],
                 sc.pack(h, 4096, 256, 0)), E_INVAL)
    expect_error('SCRUB of a version of a pool that is not consistent',
                 c.req(T['SCRUB'], sc.pack(h, 0, 1, 7)), E_BUSY)
    expect_error('SCRUB of an unknown handle', c.req(T['SCRUB'],
                 sc.pack(h + 99, 0, 1, 0)), E_INVAL)
    for what, payload in (
            ('SCRUB of 0 pieces', sc.pack(h, 0, 0, 0)),
            ('SCRUB of 16385 pieces', sc.pack(h, 0, 16385, 0)),
            ('SCRUB at an unaligned offset', sc.pack(h, 100, 1, 0)),
            ('SCRUB offset + length overflows',
             sc.pack(h, 2**64 - 4096, 2, 0)),
            ('SCRUB with a byte too many', sc.pack(h, 0, 1, 0) + b'x')):
        expect_error(what, c.req(T['SCRUB'], payload), E_PROTO)


def versions_checks(c, h):
    """VERSIONS and READ_AT of a new 1 MiB pool (empty: no versions)"""
    vs = struct.Struct('<IBQ')
    ra = struct.Struct('<IQIQ')
    typ, p = c.req(T['VERSIONS'], vs.pack(h, 0, 0))
    check('VERSIONS list of a new pool: none',
          typ == 'VERSIONS_REPLY' and p == b'\0\0\0\0')
    expect_error('VERSIONS prune of no such version',
                 c.req(T['VERSIONS'], vs.pack(h, 1, 7)), E_NOPOOL)
    expect_error('VERSIONS of an unknown handle',
                 c.req(T['VERSIONS'], vs.pack(h + 99, 0, 0)), E_INVAL)
    for what, payload in (
            ('VERSIONS with an unknown op', vs.pack(h, 3, 0)),
            ('short VERSIONS', vs.pack(h, 0, 0)[:-1]),
            ('VERSIONS with a byte too many', vs.pack(h, 0, 0) + b'x')):
        expect_error(what, c.req(T['VERSIONS'], payload), E_PROTO)
    expect_error('READ_AT of a pool that is not consistent',
                 c.req(T['READ_AT'], ra.pack(h, 0, 4096, 1)), E_BUSY)
    expect_error('READ_AT past the end',
                 c.req(T['READ_AT'], ra.pack(h, 1 << 20, 1, 1)), E_INVAL)
    expect_error('READ_AT of an unknown handle',
                 c.req(T['READ_AT'], ra.pack(h + 99, 0, 1, 1)), E_INVAL)
    for what, payload in (
            ('READ_AT offset + len overflows', ra.pack(h, 2**64 - 10, 100, 1)),
            ('READ_AT of more than 1 MiB', ra.pack(h, 0, (1 << 20) + 1, 1)),
            ('READ_AT with a byte too many', ra.pack(h, 0, 1, 1) + b'x')):
        expect_error(what, c.req(T['READ_AT'], payload), E_PROTO)


def garbage_rounds(port, rounds, rng):
    """well-framed requests of random types and payloads"""
    c = Conn(port)
    for i in range(rounds):
        typ = rng.choice([t for t in T.values() if t != T['BYE']])
        payload = bytes(rng.getrandbits(8) for _ in range(rng.randrange(40)))
        try:
            if typ in (T['WRITE'], T['BARRIER']):
                c.send(typ, payload)  # no reply, by design
                continue
            c.req(typ, payload)
        except (OSError, EOFError, RuntimeError) as e:
            check('garbage round %d (type %d) kept the session' % (i, typ),
                  False)
            print('# %r' % e)
            c = Conn(port)
    c.close()
    check('%d rounds of garbage' % rounds, alive(port))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--port', type=int, default=7636)
    ap.add_argument('--region', default='r1')
    ap.add_argument('--rounds', type=int, default=500)
    ap.add_argument('--seed', type=int, default=None)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    print('# seed %d' % seed)
    handshake_checks(a.port)
    framing_checks(a.port)
    request_checks(a.port, a.region, 'poke-%d' % os.getpid())
    later_message_checks(a.port)
    garbage_rounds(a.port, a.rounds, random.Random(seed))
    check('the daemon still serves new sessions', alive(a.port))
    print('# %d failed' % failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
