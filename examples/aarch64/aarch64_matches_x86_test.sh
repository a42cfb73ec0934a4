#!/bin/bash
# A model cross-compiled for AArch64 (cortex-a72) and run by the cross-built
# C example under qemu-aarch64 -cpu cortex-a72 gives the x86 build's outputs
# on the same input, and both give PyTorch's: within 1e-4 of max |ref| each
# (testlib.sh compare_outputs).
#
# args: AARCH64_CLASSIFY X86_CLASSIFY A64_MODEL.so X86_MODEL.so INPUT.npy
#       TORCH_EXPECTED.npy [--same_top_class]
set -euo pipefail
source "$(dirname "$0")/testlib.sh"
# One substitution per assignment (set -e sees each failure).
a64_model=$(dirname "$3")
x86_model=$(dirname "$4")
a64_classify=$1 x86_classify=$2 input_npy=$5 expected_npy=$6
shift 6
use_test_tmpdir

run_and_compare "$a64_classify" "$x86_classify" "$a64_model" "$x86_model" "$input_npy" \
  "$expected_npy" "$@"
echo PASS
