#!/usr/bin/env bash
# Runs netbench for several implementations, interleaved (petrel, gonet,
# netpoll, petrel, gonet, ...) so that drift of the machine hits all alike,
# prints each run's JSON, then the medians and the ratios of petrel to each
# other implementation.
#
#   bench/scripts/netcompare.sh [-n RUNS] [netbench flags...]
#   bench/scripts/netcompare.sh -n 5 -size 1024 -conns 100 -duration 10s
#
# RUNS defaults to 3. IMPLS (environment) chooses the implementations, default
# "petrel gonet netpoll"; one that this build of netbench lacks is skipped with
# a warning. netbench's own logs go to stderr only when a run fails.
set -euo pipefail

runs=3
if [[ "${1:-}" == "-n" ]]; then
  runs=${2:?"-n needs a number"}
  shift 2
fi
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "netcompare: -n $runs: want a positive number" >&2; exit 2; }
for a in "$@"; do
  case "$a" in -impl|-impl=*|--impl|--impl=*|-role*|--role*) echo "netcompare: do not pass $a" >&2; exit 2;; esac
done

bench=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$bench" && go build -o "$tmp/netbench" ./cmd/netbench)

available=$("$tmp/netbench" -list)
impls=()
for impl in ${IMPLS:-petrel gonet netpoll}; do
  if grep -qx "$impl" <<<"$available"; then
    impls+=("$impl")
  else
    echo "netcompare: netbench has no implementation $impl; skipping it" >&2
  fi
done
[[ ${#impls[@]} -gt 0 ]] || { echo "netcompare: no implementation to run" >&2; exit 1; }

for ((i = 1; i <= runs; i++)); do
  for impl in "${impls[@]}"; do
    if ! "$tmp/netbench" -impl "$impl" -json "$@" >"$tmp/out" 2>"$tmp/err"; then
      echo "netcompare: run $i of $impl failed:" >&2
      cat "$tmp/err" >&2
      exit 1
    fi
    cat "$tmp/out"
    cat "$tmp/out" >>"$tmp/all.jsonl"
  done
done
echo
"$tmp/netbench" -compare -compare-base petrel <"$tmp/all.jsonl"
