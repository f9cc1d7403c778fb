# SPDX-License-Identifier: BSD-3-Clause
# rpmem_wire.py -- the rpmem wire format for the test peers written in
# Python (every peer in tests/peers: hostile clients, crowd.py, reader.py,
# the FLUSH and PRESERVE proxies; tests/fuzz/proto_poke.py and
# capture_seeds.py): frames, strings, HELLO, whole frames read and relayed
# between two sockets, and the message types and error codes, read from
# lib/common/proto.h itself so they cannot drift from the C code. A peer
# in tests/peers imports it as it is (import rpmem_wire as w); from
# another folder:
#     sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
#     import rpmem_wire as w
"""The rpmem wire format (docs/PROTOCOL.md) for Python test peers."""
import os
import re
import socket
import struct

HDR = struct.Struct("<IHHII")  # magic, type, flags, request id, length
HDR_SIZE = HDR.size


def _proto_h():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "lib", "common", "proto.h")
    with open(path) as f:
        return f.read()


def _constants(text):
    magic = int(re.search(r"#define RPMEM_PROTO_MAGIC (0x[0-9a-fA-F]+)u?",
                          text).group(1), 16)
    version = int(re.search(r"#define RPMEM_PROTO_VERSION (\d+)",
                            text).group(1))
    msgs = {m: int(v) for m, v in
            re.findall(r"\bRPMEM_MSG_([A-Z_]+) = (\d+)", text)
            if m != "TYPE_MAX"}
    errs = {m: int(v) for m, v in
            re.findall(r"\bRPMEM_E_([A-Z_]+) = (\d+)", text) if m != "MAX"}
    return magic, version, msgs, errs


MAGIC, VERSION, MSG, ERR = _constants(_proto_h())
NAMES = {v: k for k, v in MSG.items()}  # message type -> name
globals().update(MSG)  # HELLO, HELLO_OK, ... as module constants
globals().update({"E_" + k: v for k, v in ERR.items()})  # E_PROTO, ...


def frame(mtype, rid, payload=b"", magic=None, length=None):
    """one frame: header + payload (magic and length may lie, for tests)"""
    n = len(payload) if length is None else length
    return HDR.pack(MAGIC if magic is None else magic, mtype, 0, rid,
                    n) + payload


def wstr(text):
    """a wire string: u16 length + bytes"""
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<H", len(b)) + b


def hello_payload(client="test", vmin=VERSION, vmax=VERSION, auth=0):
    """HELLO: versions, auth method, client name, no auth data"""
    return struct.pack("<HHH", vmin, vmax, auth) + wstr(client) + b"\0\0"


def recv_full(s, n):
    """exactly n bytes of s; ConnectionResetError if it ends first"""
    buf = b""
    while len(buf) < n:
        c = s.recv(n - len(buf))
        if not c:
            raise ConnectionResetError("closed")
        buf += c
    return buf


def recv_frame(s):
    """(type, id, payload) of the next frame of s"""
    magic, t, _, rid, ln = HDR.unpack(recv_full(s, HDR_SIZE))
    if magic != MAGIC:
        raise RuntimeError("bad magic 0x%08x from the daemon" % magic)
    return t, rid, recv_full(s, ln)


def read_frame(sock):
    """(type, id, whole frame) of the next frame of sock, None at its end;
    ValueError if it is not an rpmem frame (for peers that pass frames on
    as they came)"""
    buf = b""
    while len(buf) < HDR_SIZE:
        chunk = sock.recv(HDR_SIZE - len(buf))
        if not chunk:
            return None
        buf += chunk
    magic, ftype, _flags, fid, flen = HDR.unpack(buf)
    if magic != MAGIC:
        raise ValueError("not an rpmem frame")
    while len(buf) < HDR_SIZE + flen:
        chunk = sock.recv(min(1 << 20, HDR_SIZE + flen - len(buf)))
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


def request(s, mtype, rid, payload=b""):
    """send one frame, return the reply's (type, payload)"""
    s.sendall(frame(mtype, rid, payload))
    t, _, p = recv_frame(s)
    return t, p


def error_code(payload):
    """the code of an ERROR payload, None if it is too short"""
    return struct.unpack_from("<I", payload)[0] if len(payload) >= 4 else None


def error_text(payload):
    """an ERROR payload as "ERROR code message" """
    code, ln = struct.unpack("<IH", payload[:6])
    return "ERROR %d %s" % (code, payload[6:6 + ln].decode(errors="replace"))


def connect(port, src=None, timeout=None):
    """a TCP connection to 127.0.0.1:port, from source address src"""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if timeout is not None:
        s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def hello_session(port, client="test", src=None):
    """a connection past HELLO_OK and its session id; RuntimeError (the
    target's ERROR as text) if refused"""
    s = connect(port, src)
    t, p = request(s, MSG["HELLO"], 1, hello_payload(client))
    if t != MSG["HELLO_OK"]:
        s.close()
        raise RuntimeError("no HELLO_OK: " + error_text(p))
    return s, struct.unpack_from("<I", p, 2)[0]


class Reader:
    """little-endian fields of a payload, in order"""

    def __init__(self, b):
        self.b, self.i = b, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.b, self.i)
        self.i += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def str(self):
        n = self.take("H")
        self.i += n
        return self.b[self.i - n:self.i].decode()

    def left(self):
        return len(self.b) - self.i
