#!/bin/bash
# MobileNet-v2 cross-compiled for AArch64 (cortex-a72) and run by the
# cross-built C example under qemu-aarch64 -cpu cortex-a72 gives the same
# scores as the x86 build on the same input: max |a64 - x86| must stay within
# 1e-4 of max |x86| (different FMA contraction and summation order only),
# and both within 1e-4 (relative to max |torch|) of PyTorch's output.
# Also: each architecture's runtime refuses the other's library, and a
# Cortex-A72 refuses a model built for Neoverse-V1 naming the features.
#
# args: AARCH64_CLASSIFY X86_CLASSIFY A64_MODEL.so X86_MODEL.so
#       NEOVERSE_V1_MODEL.so INPUT.npy TORCH_EXPECTED.npy
set -euo pipefail
source "$(dirname "$0")/testlib.sh"
# One substitution per assignment (set -e sees each failure).
a64_model=$(dirname "$3")
x86_model=$(dirname "$4")
v1_model=$(dirname "$5")
a64_classify=$1 x86_classify=$2 input_npy=$6 expected_npy=$7
use_test_tmpdir

run_and_compare "$a64_classify" "$x86_classify" "$a64_model" "$x86_model" "$input_npy" \
  "$expected_npy" --same_top_class

# Each runtime names the other architecture instead of failing in dlopen.
if qemu_run "$a64_classify" "$x86_model" 2>"$tmp/err.txt"; then exit 1; fi
grep -q "was built for x86_64; this machine is aarch64" "$tmp/err.txt" || { cat "$tmp/err.txt"; exit 1; }
if "$x86_classify" "$a64_model" 2>"$tmp/err.txt"; then exit 1; fi
grep -q "was built for aarch64; this machine is x86_64" "$tmp/err.txt" || { cat "$tmp/err.txt"; exit 1; }

# A Cortex-A72 (HWCAP as qemu reports it) lacks what Neoverse-V1 code may use.
if qemu_run "$a64_classify" "$v1_model" 2>"$tmp/err.txt"; then exit 1; fi
cat "$tmp/err.txt"
grep -q "CPU features this machine lacks: .*sve" "$tmp/err.txt"
echo PASS
