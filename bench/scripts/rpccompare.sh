#!/usr/bin/env bash
# Runs rpcbench for the RPC implementations, interleaved (petrel, petrel-mux,
# grpc, apache, petrel, ...) so that drift of the machine hits all alike,
# prints each run's JSON, then the medians and the ratios the RPC issue
# targets (rpcbench -compare): in closed-loop runs petrel/grpc and
# petrel/apache QPS, petrel/grpc p99 and petrel-mux/petrel QPS; in paced runs
# (-rate) petrel/grpc server CPU per request.
#
#   bench/scripts/rpccompare.sh [-n RUNS] [rpcbench flags...]
#   bench/scripts/rpccompare.sh -size 1024 -conc 100 -duration 10s
#   bench/scripts/rpccompare.sh -size 1024 -conc 100 -duration 10s -rate 40000
#
# RUNS defaults to 3. IMPLS (environment) chooses the implementations, default
# "petrel petrel-mux grpc apache". rpcbench's own logs go to stderr only when
# a run fails or logs errors. The load average is printed before and after.
set -euo pipefail

runs=3
if [[ "${1:-}" == "-n" ]]; then
  runs=${2:?"-n needs a number"}
  shift 2
fi
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "rpccompare: -n $runs: want a positive number" >&2; exit 2; }
for a in "$@"; do
  case "$a" in -impl|-impl=*|--impl|--impl=*|-role*|--role*|-json*|--json*) echo "rpccompare: do not pass $a" >&2; exit 2;; esac
done

bench=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$bench" && GOWORK=off go build -o "$tmp/rpcbench" ./cmd/rpcbench)

available=$("$tmp/rpcbench" -list)
impls=()
for impl in ${IMPLS:-petrel petrel-mux grpc apache}; do
  if grep -qx "$impl" <<<"$available"; then
    impls+=("$impl")
  else
    echo "rpccompare: rpcbench has no implementation $impl" >&2
    exit 2
  fi
done

echo "uptime before: $(uptime)"
for ((i = 1; i <= runs; i++)); do
  for impl in "${impls[@]}"; do
    if ! "$tmp/rpcbench" -impl "$impl" -json "$@" >"$tmp/out" 2>"$tmp/err"; then
      echo "rpccompare: run $i of $impl failed:" >&2
      cat "$tmp/err" >&2
      exit 1
    fi
    if grep -q "calls failed" "$tmp/err"; then
      grep -v "pinning verified\|server pid" "$tmp/err" >&2 || true
    fi
    cat "$tmp/out"
    cat "$tmp/out" >>"$tmp/all.jsonl"
  done
done
echo "uptime after: $(uptime)"
echo
"$tmp/rpcbench" -compare <"$tmp/all.jsonl"
