#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# capture_seeds.py -- seeds for the decode fuzz target from real traffic:
# a plaintext proxy (tests/peers/relay.py) between rpmemctl and rpmemd on
# loopback that cuts both streams into frames and writes each payload,
# prefixed with the index of its decoder in tests/fuzz/decode_fuzz.c, as
# one file of OUT_DIR (named by that decoder and the payload's hash; duplicates
# collapse). Runs until killed.
#
# usage: capture_seeds.py LISTEN_PORT TARGET_PORT OUT_DIR
import hashlib
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "peers"))
import relay  # noqa: E402
import rpmem_wire as w  # noqa: E402

# the decoders' order in decode_fuzz.c
DECODERS = ["hdr", "hello", "hello_ok", "error", "list", "list_reply",
            "list_paged", "create", "remove", "open", "open_ok", "handle",
            "io", "flush", "hash", "hashv", "hashes", "set_state", "state",
            "status", "status_reply", "status_flags", "kick", "events",
            "event", "rdma_blob", "scrub", "scrub_reply", "preserve",
            "list_undo", "versions", "versions_reply", "read_at",
            "list_versions", "gen", "gen_reply", "list_gens"]
# message type -> the decoders its payload is a seed of (replies whose
# layout a request flag chose go to both)
BY_TYPE = {w.HELLO: ["hello"], w.HELLO_OK: ["hello_ok"], w.ERROR: ["error"],
           w.LIST: ["list"], w.LIST_REPLY: ["list_reply", "list_paged", "list_undo",
                                         "list_versions", "gen", "gen_reply", "list_gens"],
           w.CREATE: ["create"], w.REMOVE: ["remove"], w.OPEN: ["open"],
           w.OPEN_OK: ["open_ok"], w.CLOSE: ["handle"], w.READ: ["io"],
           w.FLUSH: ["flush"], w.BARRIER: ["flush"], w.HASH: ["hash"], w.HASHES: ["hashes"],
           w.SET_STATE: ["set_state"], w.STATUS: ["status"],
           w.STATUS_REPLY: ["status_reply", "status_flags"],
           w.HASHV: ["hashv"], w.STATE: ["state"], w.KICK: ["kick"],
           w.EVENTS: ["events"], w.EVENT: ["event"], w.SCRUB: ["scrub"],
           w.SCRUB_REPLY: ["scrub_reply"], w.PRESERVE: ["preserve"],
           w.VERSIONS: ["versions"], w.VERSIONS_REPLY: ["versions_reply"],
           w.READ_AT: ["read_at"], w.GEN: ["gen"],
           w.GEN_REPLY: ["gen_reply"]}
lock = threading.Lock()


def save(out, name, payload):
    data = bytes([DECODERS.index(name)]) + payload
    h = hashlib.sha1(data).hexdigest()[:12]
    with lock:
        with open(os.path.join(out, f"{name}-{h}"), "wb") as f:
            f.write(data)


class Cutter:
    """a tap of one direction: cuts the stream into frames and saves each
    payload as a seed (a WRITE's 16-byte head only, its data skipped)"""

    def __init__(self, out):
        self.out = out
        self.buf = b""
        self.skip = 0  # bytes of a WRITE's data still to stream by

    def __call__(self, data):
        n = min(self.skip, len(data))
        self.skip -= n
        self.buf += data[n:]
        while self.frame():
            pass
        return data

    def frame(self):
        """save the frame at the head of buf; False if it is not all in"""
        buf, out = self.buf, self.out
        if len(buf) < w.HDR_SIZE:
            return False
        _, typ, _, _, ln = w.HDR.unpack(buf[:w.HDR_SIZE])
        if typ == w.WRITE:
            if len(buf) < 32:
                return False
            save(out, "hdr", buf[:16])
            save(out, "io", buf[16:32])
            self.skip = max(0, 16 + ln - len(buf))
            self.buf = buf[16 + ln:]
            return True
        if len(buf) < 16 + ln:
            return False
        save(out, "hdr", buf[:16])
        for name in BY_TYPE.get(typ, []):
            if ln <= 65536:
                save(out, name, buf[16:16 + ln])
        self.buf = buf[16 + ln:]
        return True


def main():
    lport, tport, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    relay.serve(lport, tport, taps=lambda: (Cutter(out), Cutter(out)))


if __name__ == "__main__":
    main()
