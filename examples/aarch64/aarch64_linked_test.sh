#!/bin/bash
# The C example cross-built for AArch64 and linked statically with the
# libmodel.a of an AArch64 compile (a tiny seeded CNN, //compiler:tiny_net)
# runs the model under qemu-aarch64 -cpu cortex-a72 with no model.so
# anywhere: its scores equal, bit for bit (the same objects), those of the
# AArch64 example that opens the same compile's model.so, and match the x86
# build's and PyTorch's within 1e-4 of max |ref| (testlib.sh).
#
# args: A64_CLASSIFY_LINKED A64_CLASSIFY A64_MODEL.so X86_CLASSIFY
#       X86_MODEL.so INPUT.npy TORCH_EXPECTED.npy
set -euo pipefail
source "$(dirname "$0")/testlib.sh"
# One substitution per assignment: a line of several reports only the last
# one's status, so set -e would miss a failed earlier one.
linked=$(realpath "$1")
a64_model=$(dirname "$3")
x86_model=$(dirname "$5")
a64_classify=$2 x86_classify=$4 input_npy=$6 expected_npy=$7
use_test_tmpdir

# readelf reads any ELF on this machine (nm would need the AArch64 binutils).
# Its output is held first: grep -q stops reading early, and with pipefail
# the writer's SIGPIPE would fail the check.
header=$(readelf -h "$linked")
dynamic=$(readelf -d "$linked")
symbols=$(readelf -Ws "$linked")
grep -q "Machine: *AArch64" <<<"$header" || { echo "$header"; exit 1; }
if grep -q "model.so" <<<"$dynamic"; then
  echo "$linked depends on a model.so" >&2
  exit 1
fi
grep -Eq "FUNC +GLOBAL +DEFAULT +[0-9]+ tf_model_open_linked$" <<<"$symbols" ||
  { echo "$linked does not define tf_model_open_linked" >&2; exit 1; }

npy_to_raw "$input_npy" "$tmp/input.raw"
# Run from an empty directory: nothing to dlopen there.
mkdir -p "$tmp/empty"
(cd "$tmp/empty" && qemu_run "$linked" - "$tmp/input.raw" "$tmp/linked.raw")
qemu_run "$a64_classify" "$a64_model" "$tmp/input.raw" "$tmp/shared.raw"
cmp "$tmp/linked.raw" "$tmp/shared.raw"
"$x86_classify" "$x86_model" "$tmp/input.raw" "$tmp/x86.raw"
compare_outputs --same_top_class "$tmp/linked.raw" "$tmp/x86.raw" "$expected_npy"
echo PASS
