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
a64_classify=$1 x86_classify=$2 a64_model=$(dirname "$3") x86_model=$(dirname "$4")
v1_model=$(dirname "$5") input_npy=$6 expected_npy=$7
tmp=${TEST_TMPDIR:-$(mktemp -d)}

qemu=$(command -v qemu-aarch64 || true)
if [[ -z $qemu ]]; then
  echo "qemu-aarch64 not found: run scripts/install_deps.sh (qemu-user)" >&2
  exit 1
fi
# -L /: the arm64 multiarch libraries (libc6:arm64, libabsl:arm64 from
# scripts/install_deps.sh), as tests/aarch64_agent_test.cc runs the agent.
# (-L /usr/aarch64-linux-gnu mixes the cross toolchain's libc with the
# multiarch abseil and libstdc++; the program then spins before its first
# thread starts under qemu 7.2.)
qemu_run() { "$qemu" -cpu cortex-a72 -L / "$@"; }

/usr/bin/python3 -c "import numpy, sys; numpy.load(sys.argv[1]).astype('<f4').tofile(sys.argv[2])" \
  "$input_npy" "$tmp/input.raw"

"$x86_classify" "$x86_model" "$tmp/input.raw" "$tmp/x86.raw"
start=$(date +%s.%N)
qemu_run "$a64_classify" "$a64_model" "$tmp/input.raw" "$tmp/a64.raw"
end=$(date +%s.%N)
# A figure for the log, not a check.
echo "qemu-aarch64 -cpu cortex-a72: open + one 2-thread inference in $(awk "BEGIN { printf \"%.2f\", $end - $start }") s"

/usr/bin/python3 - "$tmp/a64.raw" "$tmp/x86.raw" "$expected_npy" <<'PY'
import sys
import numpy
a64 = numpy.fromfile(sys.argv[1], dtype="<f4")
x86 = numpy.fromfile(sys.argv[2], dtype="<f4")
torch = numpy.load(sys.argv[3]).reshape(-1)
assert a64.shape == x86.shape == torch.shape, (a64.shape, x86.shape, torch.shape)
def error(got, want):
    return float(numpy.max(numpy.abs(got.astype(numpy.float64) - want)) / numpy.max(numpy.abs(want)))
figures = {"a64 vs x86": error(a64, x86), "a64 vs torch": error(a64, torch),
           "x86 vs torch": error(x86, torch)}
for name, value in figures.items():
    print(f"max |{name}| / max |ref| = {value:.3g}")
assert int(numpy.argmax(a64)) == int(numpy.argmax(x86)), "top classes differ"
bad = {k: v for k, v in figures.items() if not v <= 1e-4}
assert not bad, f"beyond the 1e-4 tolerance: {bad}"
PY

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
