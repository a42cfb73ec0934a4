#!/bin/bash
# Runs the C example on a model compiled by `tunefleet compile` (genrule).
set -euo pipefail
out=$("$1" "$(dirname "$2")")
echo "$out"
grep -q "^class [0-9]" <<<"$out"
# A missing model gives the C API's error, not a crash.
if "$1" /nonexistent 2>err.txt; then exit 1; fi
grep -q "does not exist" err.txt
