#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# capture_seeds.py -- seeds for the decode fuzz target from real traffic:
# a plaintext proxy between rpmemctl and rpmemd on loopback that cuts
# both streams into frames and writes each payload, prefixed with the
# index of its decoder in tests/fuzz/decode_fuzz.c, as one file of
# OUT_DIR (named by that decoder and the payload's hash; duplicates
# collapse). Runs until killed.
#
# usage: capture_seeds.py LISTEN_PORT TARGET_PORT OUT_DIR
import hashlib
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tools"))
import rpmem_wire as w  # noqa: E402

# the decoders' order in decode_fuzz.c
DECODERS = ["hdr", "hello", "hello_ok", "error", "list", "list_reply",
            "list_paged", "create", "remove", "open", "open_ok", "handle",
            "io", "flush", "hash", "hashv", "hashes", "set_state", "state",
            "status", "status_reply", "status_flags", "kick", "events",
            "event", "rdma_blob", "scrub", "scrub_reply"]
# message type -> the decoders its payload is a seed of (replies whose
# layout a request flag chose go to both)
BY_TYPE = {w.HELLO: ["hello"], w.HELLO_OK: ["hello_ok"], w.ERROR: ["error"],
           w.LIST: ["list"], w.LIST_REPLY: ["list_reply", "list_paged"],
           w.CREATE: ["create"], w.REMOVE: ["remove"], w.OPEN: ["open"],
           w.OPEN_OK: ["open_ok"], w.CLOSE: ["handle"], w.READ: ["io"],
           w.FLUSH: ["flush"], w.HASH: ["hash"], w.HASHES: ["hashes"],
           w.SET_STATE: ["set_state"], w.STATUS: ["status"],
           w.STATUS_REPLY: ["status_reply", "status_flags"],
           w.HASHV: ["hashv"], w.STATE: ["state"], w.KICK: ["kick"],
           w.EVENTS: ["events"], w.EVENT: ["event"], w.SCRUB: ["scrub"],
           w.SCRUB_REPLY: ["scrub_reply"]}
lock = threading.Lock()


def save(out, name, payload):
    data = bytes([DECODERS.index(name)]) + payload
    h = hashlib.sha1(data).hexdigest()[:12]
    with lock:
        with open(os.path.join(out, f"{name}-{h}"), "wb") as f:
            f.write(data)


def pump(src, dst, out):
    buf = b""
    try:
        while True:
            data = src.recv(1 << 20)
            if not data:
                break
            dst.sendall(data)
            buf += data
            while len(buf) >= w.HDR_SIZE:
                _, typ, _, _, ln = w.HDR.unpack(buf[:w.HDR_SIZE])
                if typ == w.WRITE:  # its 16-byte head, not the data
                    if len(buf) < 32:
                        break
                    save(out, "hdr", buf[:16])
                    save(out, "io", buf[16:32])
                    if len(buf) < 16 + ln:
                        # skip the data as it streams by
                        need = 16 + ln - len(buf)
                        buf = b""
                        while need > 0:
                            d = src.recv(min(need, 1 << 20))
                            if not d:
                                return
                            dst.sendall(d)
                            need -= len(d)
                        continue
                    buf = buf[16 + ln:]
                    continue
                if len(buf) < 16 + ln:
                    break
                save(out, "hdr", buf[:16])
                for name in BY_TYPE.get(typ, []):
                    if ln <= 65536:
                        save(out, name, buf[16:16 + ln])
                buf = buf[16 + ln:]
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(c, tport, out):
    t = socket.create_connection(("127.0.0.1", tport))
    a = threading.Thread(target=pump, args=(c, t, out), daemon=True)
    b = threading.Thread(target=pump, args=(t, c, out), daemon=True)
    a.start()
    b.start()


def main():
    lport, tport, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", lport))
    ls.listen(16)
    while True:
        c, _ = ls.accept()
        serve(c, tport, out)


if __name__ == "__main__":
    main()
