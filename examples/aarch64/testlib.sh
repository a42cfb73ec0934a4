#!/bin/bash
# Shared by the examples/aarch64 tests (sourced): running AArch64 programs
# under qemu-aarch64 as a Cortex-A72 (the RK3399's big core) and comparing
# the output floats of two builds of a model with PyTorch's.
#
#   source "$(dirname "$0")/testlib.sh"
#   qemu_run PROGRAM ARGS...            # qemu-aarch64 -cpu cortex-a72 -L /
#   npy_to_raw IN.npy OUT.raw           # float32 little endian, as classify reads
#   compare_outputs [--same_top_class] A64.raw X86.raw TORCH.npy

# qemu-user and the cross toolchain come with scripts/install_deps.sh test
# (./scripts/test.sh runs it first): a machine without them has not been set
# up, and the test says so instead of passing without having run anything.
qemu=$(command -v qemu-aarch64 || true)
if [[ -z $qemu ]]; then
  echo "qemu-aarch64 not found: run scripts/install_deps.sh test (package qemu-user)" >&2
  exit 1
fi

# -L /: the arm64 multiarch libraries (libc6:arm64, libabsl:arm64 from
# scripts/install_deps.sh), as tests/aarch64_agent_test.cc runs the agent.
# (-L /usr/aarch64-linux-gnu mixes the cross toolchain's libc with the
# multiarch abseil and libstdc++; the program then spins before its first
# thread starts under qemu 7.2.)
qemu_run() { "$qemu" -cpu cortex-a72 -L / "$@"; }

npy_to_raw() {
  /usr/bin/python3 -c "import numpy, sys; numpy.load(sys.argv[1]).astype('<f4').tofile(sys.argv[2])" "$1" "$2"
}

# Each pair's max |got - want| / max |want| must stay within 1e-4: the two
# builds differ only in FMA contraction and summation order, and each is
# within float32 rounding of PyTorch. With --same_top_class (classifiers),
# both builds must also name the same top class.
compare_outputs() {
  /usr/bin/python3 - "$@" <<'PY'
import sys
import numpy
args = sys.argv[1:]
same_top_class = "--same_top_class" in args
a64_path, x86_path, torch_path = [a for a in args if a != "--same_top_class"]
a64 = numpy.fromfile(a64_path, dtype="<f4")
x86 = numpy.fromfile(x86_path, dtype="<f4")
torch = numpy.load(torch_path).reshape(-1)
if not a64.shape == x86.shape == torch.shape:
    sys.exit(f"output sizes differ: a64 {a64.shape}, x86 {x86.shape}, torch {torch.shape}")
def error(got, want):
    return float(numpy.max(numpy.abs(got.astype(numpy.float64) - want)) / numpy.max(numpy.abs(want)))
figures = {"a64 vs x86": error(a64, x86), "a64 vs torch": error(a64, torch),
           "x86 vs torch": error(x86, torch)}
for name, value in figures.items():
    print(f"max |{name}| / max |ref| = {value:.3g}")
if same_top_class:
    if int(numpy.argmax(a64)) != int(numpy.argmax(x86)):
        sys.exit(f"top classes differ: a64 {int(numpy.argmax(a64))}, x86 {int(numpy.argmax(x86))}")
bad = {k: v for k, v in figures.items() if not v <= 1e-4}
if bad:
    sys.exit(f"beyond the 1e-4 tolerance: {bad}")
PY
}

# Sets tmp: Bazel's TEST_TMPDIR, or outside Bazel a new directory removed
# when the script exits.
use_test_tmpdir() {
  if [[ -n "${TEST_TMPDIR:-}" ]]; then
    tmp=$TEST_TMPDIR
  else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
  fi
}

# Runs INPUT.npy through the x86 build and, under qemu, the AArch64 build
# (writing $tmp/input.raw, $tmp/x86.raw, $tmp/a64.raw; $tmp must be set) and
# compares them with each other and with PyTorch's output (compare_outputs).
#   run_and_compare A64_CLASSIFY X86_CLASSIFY A64_MODEL_DIR X86_MODEL_DIR
#                   INPUT.npy TORCH_EXPECTED.npy [--same_top_class]
run_and_compare() {
  local a64_classify=$1 x86_classify=$2 a64_model=$3 x86_model=$4 input_npy=$5 expected_npy=$6
  shift 6
  npy_to_raw "$input_npy" "$tmp/input.raw"
  "$x86_classify" "$x86_model" "$tmp/input.raw" "$tmp/x86.raw"
  local start
  start=$(date +%s.%N)
  qemu_run "$a64_classify" "$a64_model" "$tmp/input.raw" "$tmp/a64.raw"
  # A figure for the log, not a check.
  echo "qemu-aarch64 -cpu cortex-a72: open + one 2-thread inference in $(seconds_since "$start") s"
  compare_outputs "$@" "$tmp/a64.raw" "$tmp/x86.raw" "$expected_npy"
}

# Seconds since $1 (a date +%s.%N), for the log.
seconds_since() { awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $1 }"; }
