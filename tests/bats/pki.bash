# SPDX-License-Identifier: BSD-3-Clause
# pki.bash -- certificates for the TLS suites, made with openssl

# make_pki DIR -- a CA, a server certificate for 127.0.0.1/localhost, a
# client certificate (CN alice), one signed by another CA, an expired one;
# impostor targets: self (self-signed for 127.0.0.1/localhost) and
# elsewhere (signed by the CA for 192.0.2.1/elsewhere.example)
make_pki() {
	local d=$1
	mkdir -p "$d"
	(
		cd "$d" || exit 1
		ossl() { openssl "$@" 2>/dev/null; }
		for ca in ca other; do
			ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
				-nodes -days 2 -subj "/CN=rpmem test $ca" \
				-keyout $ca.key -out $ca.crt
		done
		csr() { # NAME CN
			ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
				-nodes -subj "/CN=$2" -keyout "$1.key" -out "$1.csr"
		}
		sign() { # NAME CA [EXTFILE]
			ossl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" \
				-CAcreateserial -days 2 ${3:+-extfile "$3"} \
				-out "$1.crt"
		}
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >srv.ext
		csr server localhost && sign server ca srv.ext
		# impostors: self-signed for this target's names, and signed
		# by the target's CA for another host
		ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
			-nodes -days 2 -subj /CN=localhost \
			-addext 'subjectAltName=IP:127.0.0.1,DNS:localhost' \
			-keyout self.key -out self.crt
		printf 'subjectAltName=IP:192.0.2.1,DNS:elsewhere.example\n' >else.ext
		csr elsewhere elsewhere.example && sign elsewhere ca else.ext
		csr alice alice && sign alice ca
		csr mallory mallory && sign mallory other
		# expired: valid for one day in 2020
		csr old old
		mkdir -p db && : >db/index.txt && echo 01 >db/serial
		cat >ca.cnf <<CNF
[ ca ]
default_ca = d
[ d ]
dir = $d/db
database = $d/db/index.txt
new_certs_dir = $d/db
serial = $d/db/serial
default_md = sha256
policy = p
[ p ]
commonName = supplied
CNF
		ossl ca -batch -config ca.cnf -cert ca.crt -keyfile ca.key \
			-in old.csr -out old.crt -startdate 20200101000000Z \
			-enddate 20200102000000Z
		chmod 600 ./*.key
	)
}
