#!/usr/bin/env bash
# Generates the Apache Thrift side of the interop tests into gen-apache/
# (git-ignored) with the Apache Thrift compiler. `make vet` and `make test`
# run it before vetting and testing this module; CI installs the compiler.
# The Petrel side (gen-petrel/) is committed; gen_test.go checks it is current.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v thrift >/dev/null 2>&1; then
	echo "interop/generate.sh: the Apache Thrift compiler (thrift) is not installed;" >&2
	echo "install it (Debian/Ubuntu: apt-get install thrift-compiler) and run again." >&2
	exit 1
fi

rm -rf gen-apache
mkdir -p gen-apache
# The compiler prints warnings about the IDL's deliberate "byte" and
# list<byte> fields on stdout, and its errors there too: show its output only
# when it fails.
for idl in idl/everything.thrift; do
	if ! out=$(thrift --gen go:package_prefix=github.com/petrel-rpc/petrel/interop/gen-apache/,skip_remote \
		-out gen-apache "$idl" 2>&1); then
		echo "interop/generate.sh: thrift failed on $idl:" >&2
		echo "$out" >&2
		exit 1
	fi
done
