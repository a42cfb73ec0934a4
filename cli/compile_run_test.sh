#!/bin/bash
# `tunefleet compile` then `tunefleet run` as a user types them, on a tiny
# seeded CNN (//compiler:tiny_net): compile writes model.so and libmodel.a
# and warns per layer on default configs; run --output writes y.npy equal
# to what the C API gives (//examples:classify on the same directory:
# max |diff| <= 1e-6 of max |y|, other thread count) and within 1e-4 of
# PyTorch's output, and prints the latency lines (median with min/max,
# mean with std dev, AutoTVM's "Mean inference time (std dev)"); without
# --output it prints the top-5 classes; a wrong-shape input is refused by name.
#
# args: TUNEFLEET CLASSIFY MODEL.onnx INPUT.npy TORCH_EXPECTED.npy
set -euo pipefail
tunefleet=$1 classify=$2 onnx=$3 input_npy=$4 expected_npy=$5
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail() { echo "FAIL: $*" >&2; exit 1; }

"$tunefleet" compile --model "$onnx" --target llvm -o "$tmp/out" >"$tmp/compile.txt"
cat "$tmp/compile.txt"
grep -q "^wrote $tmp/out/model.so and $tmp/out/libmodel.a" "$tmp/compile.txt" || fail "no 'wrote' line"
grep -q "^warning: layer '.*' (.*): no record for 'llvm', using the default config" "$tmp/compile.txt" \
  || fail "no default-config warning"
[[ -s $tmp/out/model.so && -s $tmp/out/libmodel.a ]] || fail "missing outputs"

"$tunefleet" run --model "$tmp/out" --input "$input_npy" --output "$tmp/y.npy" --threads 1 \
  --runs 20 >"$tmp/run.txt"
cat "$tmp/run.txt"
grep -q "^wrote $tmp/y.npy \[1, 10\]$" "$tmp/run.txt" || fail "no 'wrote y.npy' line"
number='[0-9]+\.[0-9]+'
line=$(grep -E "^latency: median $number ms \(min $number, max $number; mean $number, std dev $number over 20 runs, 1 threads\)$" "$tmp/run.txt") \
  || fail "no latency line"
read -r median min max < <(sed -E 's/^latency: median ([0-9.]+) ms \(min ([0-9.]+), max ([0-9.]+);.*/\1 \2 \3/' <<<"$line")
awk -v a="$min" -v b="$median" -v c="$max" 'BEGIN { exit !(a <= b && b <= c) }' \
  || fail "median $median outside [min $min, max $max]"
grep -qE "^Mean inference time \(std dev\): $number ms \($number ms\)$" "$tmp/run.txt" \
  || fail "no 'Mean inference time (std dev)' line"

/usr/bin/python3 -c "import numpy, sys; numpy.load(sys.argv[1]).astype('<f4').tofile(sys.argv[2])" \
  "$input_npy" "$tmp/input.raw"
"$classify" "$tmp/out" "$tmp/input.raw" "$tmp/c_api.raw" >/dev/null
/usr/bin/python3 - "$tmp/y.npy" "$tmp/c_api.raw" "$expected_npy" <<'PY'
import sys
import numpy
y = numpy.load(sys.argv[1])
c_api = numpy.fromfile(sys.argv[2], dtype="<f4")
torch = numpy.load(sys.argv[3])
assert y.dtype == numpy.float32 and y.shape == torch.shape == (1, 10), (y.dtype, y.shape)
def error(got, want):
    got, want = got.reshape(-1).astype(numpy.float64), want.reshape(-1)
    return float(numpy.max(numpy.abs(got - want)) / numpy.max(numpy.abs(want)))
vs_c_api, vs_torch = error(y, c_api), error(y, torch)
print(f"max |run - C API| / max |C API| = {vs_c_api:.3g}; max |run - torch| / max |torch| = {vs_torch:.3g}")
assert vs_c_api <= 1e-6, vs_c_api
assert vs_torch <= 1e-4, vs_torch
PY

"$tunefleet" run --model "$tmp/out" --input "$input_npy" --runs 3 --profile >"$tmp/profile.txt"
grep -q "^profile (per step, median of 3 runs):$" "$tmp/profile.txt" || fail "no profile header"
grep -qE "^mean total +$number ms \(the steps. means: stalls included\)$" "$tmp/profile.txt" || fail "no mean total"
grep -qE "^ +[0-9]+ [a-z_]+ .* ms  [a-z (NCHW)]+( \(epilogue $number\))?$" "$tmp/profile.txt" || { cat "$tmp/profile.txt"; fail "no step line"; }
grep -qE "^total +$number ms over [0-9]+ steps$" "$tmp/profile.txt" || fail "no profile total"
grep -qE "^ +[0-9]+ kernel .* \(alone $number\)$" "$tmp/profile.txt" || { cat "$tmp/profile.txt"; fail "no kernel's own time"; }
grep -qE "^kernels alone +$number ms \(.*\); the model in the same rounds $number ms: ${number}x its kernels$" "$tmp/profile.txt" || { cat "$tmp/profile.txt"; fail "no kernels-alone line"; }
grep -qE "^kernels, cold weights +$number ms \(.*\); the model in the same rounds $number ms: ${number}x its kernels$" "$tmp/profile.txt" || { cat "$tmp/profile.txt"; fail "no cold-weights line"; }

"$tunefleet" run --model "$tmp/out" --input "$input_npy" --runs 3 >"$tmp/top.txt"
grep -qE "^top-5:( [0-9]+ \(-?$number\)){5}$" "$tmp/top.txt" || { cat "$tmp/top.txt"; fail "no top-5 line"; }

/usr/bin/python3 -c "import numpy, sys; numpy.save(sys.argv[1], numpy.zeros((1, 3, 16, 16), numpy.float32))" \
  "$tmp/small.npy"
if "$tunefleet" run --model "$tmp/out" --input "$tmp/small.npy" 2>"$tmp/err.txt"; then
  fail "a wrong-shape input was accepted"
fi
grep -q "\[1, 3, 16, 16\]; input 'input' is float32 \[1, 3, 32, 32\]" "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "error does not name the shapes"; }
echo PASS
