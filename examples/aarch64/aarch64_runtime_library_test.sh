#!/bin/bash
# The model runtime cross-built for AArch64 as a shared library
# (libtunefleet_model.so, what programs outside Bazel link) and the C example
# built against it by a plain aarch64-linux-gnu-gcc (a genrule, as a user's
# build would): under qemu-aarch64 -cpu cortex-a72 it takes the C API from
# that library, runs an AArch64 model.so and gives, bit for bit, the scores
# of the example with the runtime linked in (the same kernels), and the x86
# build's and PyTorch's within 1e-4 of max |ref| (testlib.sh).
#
# args: A64_CLASSIFY_DYNAMIC A64_RUNTIME.so A64_CLASSIFY A64_MODEL.so
#       X86_CLASSIFY X86_MODEL.so INPUT.npy TORCH_EXPECTED.npy
set -euo pipefail
source "$(dirname "$0")/testlib.sh"
# One substitution per assignment: a line of several reports only the last
# one's status, so set -e would miss a failed earlier one.
dynamic=$(realpath "$1")
runtime=$(realpath "$2")
a64_model=$(dirname "$4")
x86_model=$(dirname "$6")
a64_classify=$3 x86_classify=$5 input_npy=$7 expected_npy=$8
use_test_tmpdir

# The program needs the library and does not carry the runtime itself; the
# library is an AArch64 shared object that exports the C API. (readelf's
# output is held first: grep -q stops reading early, and with pipefail the
# writer's SIGPIPE would fail the check.)
program_dynamic=$(readelf -d "$dynamic")
program_symbols=$(readelf -W --dyn-syms "$dynamic")
grep -q "NEEDED.*\[libtunefleet_model.so\]" <<<"$program_dynamic" || { echo "$program_dynamic"; exit 1; }
grep -Eq "FUNC +GLOBAL +DEFAULT +UND tf_model_open$" <<<"$program_symbols" ||
  { echo "$dynamic does not take tf_model_open from a library" >&2; exit 1; }
library_header=$(readelf -h "$runtime")
library_symbols=$(readelf -W --dyn-syms "$runtime")
grep -q "Type: *DYN" <<<"$library_header" || { echo "$library_header"; exit 1; }
grep -q "Machine: *AArch64" <<<"$library_header" || { echo "$library_header"; exit 1; }
for symbol in tf_model_open tf_model_run tf_model_last_error tf_model_open_symbols; do
  grep -Eq "FUNC +GLOBAL +DEFAULT +[0-9]+ $symbol$" <<<"$library_symbols" ||
    { echo "$runtime does not export $symbol" >&2; exit 1; }
done

npy_to_raw "$input_npy" "$tmp/input.raw"
# -E: the guest's loader finds the library; qemu itself (an x86 program)
# does not see the variable.
qemu_run -E LD_LIBRARY_PATH="$(dirname "$runtime")" \
  "$dynamic" "$a64_model" "$tmp/input.raw" "$tmp/dynamic.raw"
qemu_run "$a64_classify" "$a64_model" "$tmp/input.raw" "$tmp/static.raw"
cmp "$tmp/dynamic.raw" "$tmp/static.raw"
"$x86_classify" "$x86_model" "$tmp/input.raw" "$tmp/x86.raw"
compare_outputs --same_top_class "$tmp/dynamic.raw" "$tmp/x86.raw" "$expected_npy"
echo PASS
