#!/usr/bin/env bash
# bench/gpu_bench.sh: tuned GPU kernels against cuBLAS and cuDNN on this
# host's NVIDIA GPU, through a real fleet on 127.0.0.1 (tracker, builders,
# tuner and one GPU agent), so the run exercises what a GPU fleet does.
# Repeatable on any host with an NVIDIA driver, the CUDA toolkit's cuBLAS and
# this repository's build dependencies (scripts/install_deps.sh); PyTorch
# (with cuDNN) for the references beyond FP32 SGEMM:
#
#   bench/gpu_bench.sh [--trials N] [--json PATH] [--device N] [--tuner NAME]
#                      [--deadline SECONDS]
#
# In order:
#  1. the references, with nothing else on the GPU: bench/cublas_sgemm (FP32
#     SGEMM, CUDA events, median) for each dense shape, and
#     bench/gpu_references.py (PyTorch: cuBLAS FP32/TF32/FP16 dense and a
#     BERT-base batch_matmul, cuDNN FP32/FP16 for ResNet-18's 11 convolution
#     layers in the faster of NCHW and channels-last, ResNet-18 at batch 1
#     and 16) when python3 has PyTorch;
#  2. the fleet (`tunefleet up --agents 0 --builders 4` plus `tunefleet_agent
#     --gpu`), and one job per task below with target `cuda -mcpu=sm_<cc>` on
#     device key "gpu": FP32 dense 4096^3, 1024^3 and 16x4096x4096, and each
#     of ResNet-18's 11 convolutions with both CUDA conv templates (the
#     implicit GEMM and the direct one; per layer the faster counts);
#  3. the report: per task the job's validated best (AutoTVM's mean of the
#     repeats, each repeat >= MIN_REPEAT_MS of back-to-back launches timed
#     with CUDA events, re-measured in fresh runner children), the reference,
#     their ratio, the fraction of the FP32 peak (SMs x boost clock x FP32
#     lanes per SM x 2, bench/gpu_peak.cc), and the trials and wall seconds
#     the search took to come within 90 % of its final figure; the conv
#     layers' geomean against cuDNN.
# --trials N sets every task's trials (a smoke run); without it each task has
# its own (TRIALS_* below). --deadline S: a task that would start S seconds
# after the script did is skipped (and reported so), so the run fits a lease.
# The JSON (--json, default gpu_bench.json) has all of it, the jobs' records
# are in <fleet dir>/records_<job>.jsonl and every process's log in <fleet dir>/.
#
# Environment overrides: ONLY (a regular expression: only the tasks whose
# names match run), NUMBER REPEAT MIN_REPEAT_MS TIMEOUT (measure
# options), VALIDATE_TOP_K (default 3), TARGET (default cuda -mcpu=sm_<cc>),
# FLEET_DIR (default: a fresh temporary directory), BAZEL, BUILDERS (default
# 4), SANDBOX (the agent's runner sandbox: true, false, or auto (default):
# sandboxed after a 2-trial probe job; if the sandbox stopped the probe's
# runner child (the agent log names a forbidden system call), the agent
# restarts with --sandbox=false and the report says so).
set -euo pipefail

# ---- What is tuned: template names and tasks in one place. ------------------
DENSE_TEMPLATE="dense_gpu.cuda"
CONV_TEMPLATES=("conv2d_igemm.cuda" "conv2d_direct.cuda")
TRIALS_DENSE_LARGE="${TRIALS_DENSE_LARGE:-160}"  # 4096^3
TRIALS_DENSE="${TRIALS_DENSE:-64}"
TRIALS_CONV=("${TRIALS_IGEMM:-32}" "${TRIALS_DIRECT:-16}")  # per CONV_TEMPLATES entry
# name|M|N|K|trials (layout NK: C = A·Bᵀ, as cuBLAS is timed)
DENSE_SHAPES=(
  "dense_4096|4096|4096|4096|$TRIALS_DENSE_LARGE"
  "dense_1024|1024|1024|1024|$TRIALS_DENSE"
  "dense_16x4096x4096|16|4096|4096|$TRIALS_DENSE"
)
# ResNet-18's convolutions at batch 1 (`tunefleet tasks --model resnet-18`):
# name|C|H|K|R|stride|padding (square inputs and kernels). bench/gpu_references.py
# lists the same 11.
CONV_LAYERS=(
  "conv1_7x7s2|3|224|64|7|2|3"
  "l1_3x3|64|56|64|3|1|1"
  "l2_3x3s2|64|56|128|3|2|1"
  "l2_3x3|128|28|128|3|1|1"
  "l2_1x1s2|64|56|128|1|2|0"
  "l3_3x3s2|128|28|256|3|2|1"
  "l3_3x3|256|14|256|3|1|1"
  "l3_1x1s2|128|28|256|1|2|0"
  "l4_3x3s2|256|14|512|3|2|1"
  "l4_3x3|512|7|512|3|1|1"
  "l4_1x1s2|256|14|512|1|2|0"
)
KEY="gpu"
# Measure options: AutoTVM's GPU recommendation is min_repeat_ms >= 100-150.
NUMBER="${NUMBER:-4}"
REPEAT="${REPEAT:-3}"
MIN_REPEAT_MS="${MIN_REPEAT_MS:-150}"
TIMEOUT="${TIMEOUT:-30}"
VALIDATE_TOP_K="${VALIDATE_TOP_K:-3}"
BUILDERS="${BUILDERS:-4}"
SANDBOX="${SANDBOX:-auto}"
ONLY="${ONLY:-}"
# ------------------------------------------------------------------------------

TRIALS=""
DEADLINE=0
JSON_OUT="gpu_bench.json"
DEVICE=0
TUNER="xgb"
usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit "${1:-0}"
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --trials) TRIALS="$2"; shift 2 ;;
    --trials=*) TRIALS="${1#*=}"; shift ;;
    --json) JSON_OUT="$2"; shift 2 ;;
    --json=*) JSON_OUT="${1#*=}"; shift ;;
    --device) DEVICE="$2"; shift 2 ;;
    --device=*) DEVICE="${1#*=}"; shift ;;
    --tuner) TUNER="$2"; shift 2 ;;
    --tuner=*) TUNER="${1#*=}"; shift ;;
    --deadline) DEADLINE="$2"; shift 2 ;;
    --deadline=*) DEADLINE="${1#*=}"; shift ;;
    -h|--help) usage 0 ;;
    *) echo "gpu_bench.sh: unknown argument $1" >&2; usage 2 ;;
  esac
done
[[ -z "$TRIALS" || ( "$TRIALS" =~ ^[0-9]+$ && "$TRIALS" -gt 0 ) ]] || { echo "gpu_bench.sh: --trials must be a positive integer" >&2; exit 2; }
[[ "$DEADLINE" =~ ^[0-9]+$ ]] || { echo "gpu_bench.sh: --deadline must be a number of seconds" >&2; exit 2; }
START_S=$SECONDS
[[ "$SANDBOX" =~ ^(true|false|auto)$ ]] || { echo "gpu_bench.sh: SANDBOX must be true, false or auto" >&2; exit 2; }
[[ "$JSON_OUT" = /* ]] || JSON_OUT="$PWD/$JSON_OUT"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BAZEL="${BAZEL:-bazel}"
log() { echo "== $*" >&2; }
die() { echo "gpu_bench.sh: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 is needed for the report"

log "building"
"$BAZEL" build --color=no --curses=no //cli:tunefleet //tracker:tunefleet_tracker \
  //builder_worker:tunefleet_builder //device_agent:tunefleet_agent \
  //kernel_runtime:tunefleet_runner //tuner_process:tunefleet_tuner \
  //bench:gpu_info //bench:cublas_sgemm
BIN="$("$BAZEL" info bazel-bin 2>/dev/null)"
export TUNEFLEET_RUNNER="$BIN/kernel_runtime/tunefleet_runner"
TUNEFLEET=("$BIN/cli/tunefleet")

for template in "$DENSE_TEMPLATE" "${CONV_TEMPLATES[@]}"; do
  "${TUNEFLEET[@]}" templates | grep -q "^$template " ||
    die "template $template is not registered (see \`tunefleet templates\`); fix the names at the top of $0"
done

log "GPU $DEVICE"
GPU_JSON="$("$BIN/bench/gpu_info" --device "$DEVICE")" || die "no usable GPU $DEVICE (see the message above)"
echo "$GPU_JSON" >&2
CC="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["compute_capability"])' "$GPU_JSON" 2>/dev/null || true)"
if [[ -z "$CC" ]] && command -v nvidia-smi >/dev/null; then
  CC="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i "$DEVICE" | head -1 | tr -d ' ')"
fi
[[ "$CC" =~ ^[0-9]+\.[0-9]+$ ]] || die "cannot read the compute capability of GPU $DEVICE"
TARGET="${TARGET:-cuda -mcpu=sm_${CC/./}}"

FLEET_DIR="${FLEET_DIR:-$(mktemp -d /tmp/tunefleet-gpu-bench.XXXXXX)}"
mkdir -p "$FLEET_DIR"

# ---- 1. References, alone on the GPU. -------------------------------------------
CUBLAS_JSONS=()
for shape in "${DENSE_SHAPES[@]}"; do
  IFS='|' read -r name m n k _ <<<"$shape"
  log "cuBLAS SGEMM ${m}x${n}x${k} on GPU $DEVICE"
  json="$FLEET_DIR/cublas_$name.json"
  if ! "$BIN/bench/cublas_sgemm" --m "$m" --n "$n" --k "$k" --device "$DEVICE" --samples 7 \
       --min_sample_ms 30 --json "$json" >&2; then
    echo "gpu_bench.sh: cuBLAS reference for $name failed; reporting without it" >&2
    echo '{}' >"$json"
  fi
  CUBLAS_JSONS+=("$name=$json")
done
REFERENCES_JSON="$FLEET_DIR/references.json"
echo '{}' >"$REFERENCES_JSON"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if python3 -c 'import torch' 2>/dev/null; then
  log "cuBLAS/cuDNN references through PyTorch (bench/gpu_references.py)"
  python3 "$SCRIPT_DIR/gpu_references.py" --json "$REFERENCES_JSON" --device "$DEVICE" >&2 ||
    { echo "gpu_bench.sh: gpu_references.py failed; reporting without it" >&2; echo '{}' >"$REFERENCES_JSON"; }
else
  echo "gpu_bench.sh: python3 has no PyTorch: no cuDNN, TF32 or FP16 references" >&2
fi

# ---- 2. The fleet and the tuning jobs. ------------------------------------------
UP_PID="" AGENT_PID=""
stop_fleet() {
  [[ -n "$AGENT_PID" ]] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null || true
  [[ -n "$UP_PID" ]] && kill "$UP_PID" 2>/dev/null && wait "$UP_PID" 2>/dev/null || true
  AGENT_PID="" UP_PID=""
}
trap stop_fleet EXIT
trap 'exit 130' INT TERM

log "fleet in $FLEET_DIR: tracker, $BUILDERS builders, 1 tuner (tunefleet up --agents 0) and a GPU agent on key $KEY"
rm -f "$FLEET_DIR/address"
"${TUNEFLEET[@]}" up --fleet_dir "$FLEET_DIR" --agents 0 --builders "$BUILDERS" --key "$KEY" >"$FLEET_DIR/up.log" 2>&1 &
UP_PID=$!
for _ in $(seq 600); do
  [[ -s "$FLEET_DIR/address" ]] && break
  kill -0 "$UP_PID" 2>/dev/null || { cat "$FLEET_DIR/up.log" >&2; die "tunefleet up exited"; }
  sleep 0.1
done
[[ -s "$FLEET_DIR/address" ]] || die "the tracker did not start within 60 s ($FLEET_DIR/up.log)"
FLEET=(--fleet_dir "$FLEET_DIR")
# Starts the GPU agent named $1 with --sandbox=$2 and waits until it is
# registered; its log is $FLEET_DIR/$1.log.
start_agent() {
  local name="$1" sandbox="$2"
  "$BIN/device_agent/tunefleet_agent" --tracker "$(cat "$FLEET_DIR/address")" \
    --token_file "$FLEET_DIR/agent.token" --key "$KEY" --gpu --gpu_device "$DEVICE" \
    --sandbox="$sandbox" --name "$name" >"$FLEET_DIR/$name.log" 2>&1 &
  AGENT_PID=$!
  for _ in $(seq 600); do
    "${TUNEFLEET[@]}" devices "${FLEET[@]}" 2>/dev/null | grep -q "^agent  *$name  *$KEY " && break
    kill -0 "$AGENT_PID" 2>/dev/null || { cat "$FLEET_DIR/$name.log" >&2; die "the GPU agent exited"; }
    sleep 0.1
  done
  "${TUNEFLEET[@]}" devices "${FLEET[@]}" | grep -q "^agent  *$name  *$KEY " ||
    die "the GPU agent did not register within 60 s ($FLEET_DIR/$name.log)"
  "${TUNEFLEET[@]}" devices "${FLEET[@]}" >&2
}
AGENT_NAME="gpu-agent-$DEVICE"
SANDBOX_NOTE="on"
if [[ "$SANDBOX" == false ]]; then SANDBOX_NOTE="off (SANDBOX=false)"; fi
start_agent "$AGENT_NAME" "$([[ "$SANDBOX" == false ]] && echo false || echo true)"

if [[ "$SANDBOX" == auto ]]; then
  # A sandboxed runner child that the CUDA driver trips (kernel_runtime/sandbox.h)
  # dies on every trial; find out on 2 trials of a smaller dense (64 MiB of
  # tensors, a few seconds of reference), not on the whole run.
  probe_args='{"M":2048,"N":2048,"K":2048,"layout":"NK"}'
  log "sandbox probe: 2 trials of dense $probe_args with the runner sandboxed"
  probe="$("${TUNEFLEET[@]}" submit "${FLEET[@]}" --key "$KEY" --workload dense --args "$probe_args" \
    --template_name "$DENSE_TEMPLATE" --target "$TARGET" --tuner random --trials 2 \
    --number "$NUMBER" --repeat "$REPEAT" --min_repeat_ms "$MIN_REPEAT_MS" \
    --timeout "$TIMEOUT" --name "sandbox_probe")"
  "${TUNEFLEET[@]}" watch "${FLEET[@]}" --job "$probe" >&2 || true
  if stopped="$(grep -m1 "forbidden system call" "$FLEET_DIR/$AGENT_NAME.log")"; then
    echo "gpu_bench.sh: WARNING: the sandbox stopped the GPU runner child ($stopped);" \
      "measuring with --sandbox=false" >&2
    SANDBOX_NOTE="off (the sandboxed GPU runner child was stopped: $stopped)"
    kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null || true
    AGENT_NAME="gpu-agent-$DEVICE-unsandboxed"
    start_agent "$AGENT_NAME" false
  else
    log "sandbox probe: no forbidden system call; measuring sandboxed"
  fi
fi

# name|workload|template|args|trials, in the order they run.
TASKS=()
for shape in "${DENSE_SHAPES[@]}"; do
  IFS='|' read -r name m n k trials <<<"$shape"
  TASKS+=("$name|dense|$DENSE_TEMPLATE|{\"M\":$m,\"N\":$n,\"K\":$k,\"layout\":\"NK\"}|${TRIALS:-$trials}")
done
for layer in "${CONV_LAYERS[@]}"; do
  IFS='|' read -r name c h k r stride pad <<<"$layer"
  for i in "${!CONV_TEMPLATES[@]}"; do
    TASKS+=("$name|conv2d_nchw|${CONV_TEMPLATES[$i]}|{\"N\":1,\"C\":$c,\"H\":$h,\"W\":$h,\"K\":$k,\"R\":$r,\"S\":$r,\"stride\":$stride,\"padding\":$pad,\"layout\":\"NCHW\"}|${TRIALS:-${TRIALS_CONV[$i]}}")
  done
done

RESULTS="$FLEET_DIR/results.tsv"
: >"$RESULTS"
for task in "${TASKS[@]}"; do
  IFS='|' read -r name workload template args trials <<<"$task"
  [[ -z "$ONLY" || "$name" =~ $ONLY ]] || continue
  if [[ "$DEADLINE" -gt 0 && $((SECONDS - START_S)) -ge "$DEADLINE" ]]; then
    log "$name ($template): skipped, the --deadline of $DEADLINE s has passed"
    printf '%s\t%s\t%s\t%s\t\t\t%s\t%s\t\n' "$name" "$workload" "$template" "$args" \
      "skipped (deadline)" "$trials" >>"$RESULTS"
    continue
  fi
  log "$name: $workload $args, template $template, target \"$TARGET\", $trials trials ($TUNER)"
  job_start=$SECONDS
  job="$("${TUNEFLEET[@]}" submit "${FLEET[@]}" --key "$KEY" --workload "$workload" --args "$args" \
    --template_name "$template" --target "$TARGET" --tuner "$TUNER" --trials "$trials" \
    --number "$NUMBER" --repeat "$REPEAT" --min_repeat_ms "$MIN_REPEAT_MS" \
    --timeout "$TIMEOUT" --validate_top_k "$VALIDATE_TOP_K" --name "$name")"
  status=ok
  "${TUNEFLEET[@]}" watch "${FLEET[@]}" --job "$job" >&2 || status="job $job did not succeed"
  best=""
  if best_out="$("${TUNEFLEET[@]}" best "${FLEET[@]}" --job "$job" 2>&1)"; then
    best="$(head -1 <<<"$best_out" | awk '{print $1}')"
  else
    reason="no best record: $(head -1 <<<"$best_out")"
    if [[ "$status" == ok ]]; then status="$reason"; else status="$status; $reason"; fi
  fi
  "${TUNEFLEET[@]}" export "${FLEET[@]}" --job "$job" --log "$FLEET_DIR/records_$job.jsonl" >&2 || true
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$workload" "$template" "$args" "$job" \
    "${best:-}" "$status" "$trials" "$((SECONDS - job_start))" >>"$RESULTS"
done
stop_fleet
cat "$FLEET_DIR"/records_*.jsonl >"$FLEET_DIR/records.jsonl" 2>/dev/null || true

# ---- 3. The report. ----------------------------------------------------------------
CUBLAS_ARGS=()
for entry in "${CUBLAS_JSONS[@]}"; do CUBLAS_ARGS+=(--cublas "$entry"); done
python3 "$SCRIPT_DIR/gpu_report.py" --results "$RESULTS" "${CUBLAS_ARGS[@]}" \
  --references "$REFERENCES_JSON" --gpu "$GPU_JSON" --json "$JSON_OUT" --target "$TARGET" \
  --tuner "$TUNER" --measure "number=$NUMBER repeat=$REPEAT min_repeat_ms=$MIN_REPEAT_MS timeout_s=$TIMEOUT validate_top_k=$VALIDATE_TOP_K" \
  --fleet_dir "$FLEET_DIR" --sandbox "$SANDBOX_NOTE"
