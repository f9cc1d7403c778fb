#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# mkcert.py -- a client certificate whose subject CN openssl req cannot
# write (a NUL, a newline, more than 64 characters), for the TLS suites
"""Usage: mkcert.py CN CA_CRT CA_KEY OUT

CN is given with Python escapes (certrw\\x00junk, alice\\nforged). Writes
OUT.crt (signed by CA_CRT/CA_KEY, valid for two days) and OUT.key (mode
0600), a P-256 key.
"""
import codecs
import datetime
import os
import sys
import warnings

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def main():
    warnings.simplefilter("ignore")
    cn = codecs.decode(sys.argv[1], "unicode_escape")
    ca_crt = x509.load_pem_x509_certificate(open(sys.argv[2], "rb").read())
    ca_key = serialization.load_pem_private_key(
        open(sys.argv[3], "rb").read(), None
    )
    out = sys.argv[4]
    key = ec.generate_private_key(ec.SECP256R1())
    # _validate=False: the point is a name the standard would not allow
    name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, cn, _validate=False)]
    )
    now = datetime.datetime.now(datetime.timezone.utc)
    crt = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(ca_crt.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .sign(ca_key, hashes.SHA256())
    )
    with open(out + ".crt", "wb") as f:
        f.write(crt.public_bytes(serialization.Encoding.PEM))
    fd = os.open(out + ".key", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )


if __name__ == "__main__":
    main()
