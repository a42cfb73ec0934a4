#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, runs a real
# tuning job end to end in local mode (dense 1024x1024x1024 fp32, random
# search, on this host with every core) and shows the result next to
# OpenBLAS cblas_sgemm measured on the same machine right after.
#   TRIALS=500 ./scripts/demo.sh     # more trials (default 200, ~3 minutes)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TRIALS="${TRIALS:-200}"
SHAPE="${SHAPE:-1024,1024,1024}"
LOG="${LOG:-$ROOT/records.jsonl}"

./scripts/install_deps.sh demo
bazel build --color=no --curses=no //cli:tunefleet //bench:openblas_sgemm //kernel_runtime:tunefleet_runner
BIN="$(bazel info bazel-bin 2>/dev/null)"
export TUNEFLEET_RUNNER="$BIN/kernel_runtime/tunefleet_runner"

echo "== tunefleet tune --shape $SHAPE --trials $TRIALS --log $LOG"
# --resume=false: a fresh search each run, even into an existing log.
"$BIN/cli/tunefleet" tune --workload dense --shape "$SHAPE" --tuner random --trials "$TRIALS" \
  --log "$LOG" --resume=false
echo "== tunefleet best --log $LOG"
"$BIN/cli/tunefleet" best --log "$LOG"

IFS=, read -r M N K <<<"$SHAPE"
THREADS="$(nproc)"
echo "== OpenBLAS cblas_sgemm, same shape, $THREADS threads (median of 5)"
echo -n "  as shipped (its own CPU detection): "
"$BIN/bench/openblas_sgemm" "$M" "$N" "$K" "$THREADS" 5 NK
if grep -q ' avx512f' /proc/cpuinfo; then CORE=SkylakeX; elif grep -q ' avx2' /proc/cpuinfo; then CORE=Haswell; else CORE=""; fi
if [[ -n "$CORE" ]]; then
  echo -n "  OPENBLAS_CORETYPE=$CORE:              "
  OPENBLAS_CORETYPE="$CORE" "$BIN/bench/openblas_sgemm" "$M" "$N" "$K" "$THREADS" 5 NK
fi
echo "(tuned GFLOPS above are the best trial; bench/dense_bench re-measures the winner interleaved with OpenBLAS)"
