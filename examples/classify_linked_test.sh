#!/bin/bash
# The C example linked statically with a compile's libmodel.a runs the model
# with no model.so anywhere: its scores equal (bit for bit: the same
# objects) those of the example that opens model.so, and match PyTorch's
# within 1e-4 of max |torch|.
#
# args: CLASSIFY_LINKED CLASSIFY MODEL.so INPUT.npy TORCH_EXPECTED.npy
set -euo pipefail
linked=$(realpath "$1") classify=$2 model_dir=$(dirname "$3") input_npy=$4 expected_npy=$5
tmp=${TEST_TMPDIR:-$(mktemp -d)}

# The tools' output is read whole before grep looks at it: `tool | grep -q`
# under pipefail fails with SIGPIPE (141) when grep stops at its first match
# while the tool is still writing (a larger binary, a longer symbol list).
dynamic=$(readelf -d "$linked")
if grep -q "model.so" <<<"$dynamic"; then
  echo "$linked depends on a model.so" >&2
  exit 1
fi
symbols=$(nm "$linked")
grep -q " T tf_model_open_linked$" <<<"$symbols"

/usr/bin/python3 -c "import numpy, sys; numpy.load(sys.argv[1]).astype('<f4').tofile(sys.argv[2])" \
  "$input_npy" "$tmp/input.raw"
# Run from an empty directory: nothing to dlopen there.
mkdir -p "$tmp/empty"
(cd "$tmp/empty" && "$linked" - "$tmp/input.raw" "$tmp/linked.raw")
"$classify" "$model_dir" "$tmp/input.raw" "$tmp/shared.raw"
cmp "$tmp/linked.raw" "$tmp/shared.raw"

/usr/bin/python3 - "$tmp/linked.raw" "$expected_npy" <<'PY'
import sys
import numpy
got = numpy.fromfile(sys.argv[1], dtype="<f4")
want = numpy.load(sys.argv[2]).reshape(-1)
assert got.shape == want.shape, (got.shape, want.shape)
error = float(numpy.max(numpy.abs(got.astype(numpy.float64) - want)) / numpy.max(numpy.abs(want)))
print(f"max |linked - torch| / max |torch| = {error:.3g}")
assert error <= 1e-4, error
PY
echo PASS
