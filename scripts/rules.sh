#!/usr/bin/env bash
# Project rules that go vet does not check. Each rule says why it exists.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
files=$(git ls-files '*.go' | grep -v '/testdata/' | grep -v '^bench/' | grep -v '^interop/' | grep -v '^examples/')

# unsafe lives only in *_unsafe.go files (a platform suffix may follow:
# epoll_unsafe_linux.go), each saying why it is safe.
for f in $files; do
  if [[ "$(basename "$f")" =~ _unsafe(_[a-z0-9]+)*\.go$ ]]; then continue; fi
  if grep -q '"unsafe"' "$f"; then echo "rules: $f imports unsafe; move that code to a *_unsafe.go file"; fail=1; fi
done
# time.After in a loop leaks a timer per iteration until it fires.
for f in $files; do
  if awk '/for[ {]/{inloop=1} inloop && /time\.After\(/{print FILENAME": "NR; found=1} /^}/{inloop=0} END{exit !found}' "$f" >/dev/null; then
    echo "rules: $f uses time.After inside a loop; use a reusable time.Timer"; fail=1
  fi
done
# Library code never prints or panics on its own (generated code and tests excepted).
for f in $files; do
  case "$f" in *_test.go|cmd/*|*/cmd/*) continue;; esac
  if grep -nE '^\s*(fmt\.Print|log\.(Print|Fatal|Panic))' "$f" >/dev/null; then
    echo "rules: $f prints from library code"; fail=1
  fi
done
exit $fail
