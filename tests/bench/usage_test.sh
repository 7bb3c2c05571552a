#!/bin/sh
# A benchmark asked for --help prints its usage and exits 0 without running; an unknown option
# exits 2 with the usage on standard error.
#
# usage: usage_test.sh BENCHMARK
set -u
bench=$1
name=$(basename "$bench")
out=$("$bench" --help) || { echo "$name --help exited $?"; exit 1; }
case "$out" in
  "usage: $name"*) ;;
  *) echo "$name --help printed: $out"; exit 1 ;;
esac
"$bench" --no-such-option >/dev/null 2>&1
code=$?
[ "$code" -eq 2 ] || { echo "$name --no-such-option exited $code, not 2"; exit 1; }
echo "$name: usage ok"
