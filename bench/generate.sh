#!/usr/bin/env bash
# Generates the Apache Thrift side of the codec benchmarks (thrift/gen-apache/,
# git-ignored) with the Apache Thrift compiler. `make vet` and `make test` run
# it before vetting and testing this module; CI installs the compiler. The
# Petrel side (thrift/gen-petrel/) is committed; thrift/gen_test.go checks it
# is current.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v thrift >/dev/null 2>&1; then
	echo "bench/generate.sh: the Apache Thrift compiler (thrift) is not installed;" >&2
	echo "install it (Debian/Ubuntu: apt-get install thrift-compiler) and run again." >&2
	exit 1
fi

# The compiler prints its errors on stdout: show its output only when it fails.
gen() { # gen IDL OUTDIR IMPORTPREFIX
	rm -rf "$2"
	mkdir -p "$2"
	local out
	if ! out=$(thrift --gen "go:package_prefix=$3/,skip_remote" -out "$2" "$1" 2>&1); then
		echo "bench/generate.sh: thrift failed on $1:" >&2
		echo "$out" >&2
		exit 1
	fi
}

gen thrift/idl/payload.thrift thrift/gen-apache github.com/petrel-rpc/petrel/bench/thrift/gen-apache
# The Apache side of cmd/rpcbench's echo service.
gen rpc/echo.thrift rpc/gen-apache github.com/petrel-rpc/petrel/bench/rpc/gen-apache
