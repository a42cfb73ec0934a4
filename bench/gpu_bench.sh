#!/usr/bin/env bash
# bench/gpu_bench.sh: tuned GPU kernels against cuBLAS on this host's NVIDIA
# GPU, through a real fleet on 127.0.0.1 (tracker, builder, tuner and one GPU
# agent), so the run exercises what a GPU fleet does. Repeatable on any host
# with an NVIDIA driver, the CUDA toolkit's cuBLAS and this repository's
# build dependencies (scripts/install_deps.sh):
#
#   bench/gpu_bench.sh [--trials N] [--json PATH] [--device N] [--tuner NAME]
#
# It builds what it needs, reads the GPU (name, compute capability, FP32 peak)
# with bench/gpu_info (the agent's own detection; nvidia-smi as a fallback for
# the compute capability), starts the fleet with `tunefleet up --agents 0`
# plus `tunefleet_agent --gpu`, tunes each task below with target
# `cuda -mcpu=sm_<cc>` on device key "gpu", then times cuBLAS SGEMM for the
# dense shape in the same run (bench/cublas_sgemm, CUDA events, median), and
# prints per task: tuned GFLOPS (the job's best record: AutoTVM's mean of the
# repeats, each repeat >= MIN_REPEAT_MS of back-to-back launches timed with
# CUDA events), cuBLAS GFLOPS, their ratio and the fraction of the GPU's FP32
# peak (SMs x boost clock x FP32 lanes per SM x 2, bench/gpu_peak.cc). The
# JSON (--json, default gpu_bench.json) has all of it, the jobs' records are
# in <fleet dir>/records.jsonl and every process's log in <fleet dir>/.
#
# Environment overrides: NUMBER REPEAT MIN_REPEAT_MS TIMEOUT (measure
# options), TARGET (default cuda -mcpu=sm_<cc>), FLEET_DIR (default: a fresh
# temporary directory), BAZEL, SANDBOX (the agent's runner sandbox: true,
# false, or auto (default): sandboxed, after a 2-trial probe job on a 2048^3
# dense; if the sandbox stopped the probe's runner child (the agent log names
# a forbidden system call), the agent restarts with --sandbox=false and the
# report says so).
set -euo pipefail

# ---- What is tuned: template names and tasks in one place. ------------------
DENSE_TEMPLATE="dense_gpu.cuda"
CONV_TEMPLATE="conv2d_direct.cuda"
DENSE_M=4096 DENSE_N=4096 DENSE_K=4096
DENSE_ARGS="{\"M\":$DENSE_M,\"N\":$DENSE_N,\"K\":$DENSE_K,\"layout\":\"NK\"}"
# ResNet-18 at batch 1 (`tunefleet tasks --model resnet-18`): the 3x3 convs of
# layer1 (56x56, 64 -> 64 channels) and layer3 (14x14, 256 -> 256).
# name|workload|template|args
TASKS=(
  "dense_4096|dense|$DENSE_TEMPLATE|$DENSE_ARGS"
  "resnet18_conv_56x56_64x64_3x3|conv2d_nchw|$CONV_TEMPLATE|{\"N\":1,\"C\":64,\"H\":56,\"W\":56,\"K\":64,\"R\":3,\"S\":3,\"stride\":1,\"padding\":1,\"layout\":\"NCHW\"}"
  "resnet18_conv_14x14_256x256_3x3|conv2d_nchw|$CONV_TEMPLATE|{\"N\":1,\"C\":256,\"H\":14,\"W\":14,\"K\":256,\"R\":3,\"S\":3,\"stride\":1,\"padding\":1,\"layout\":\"NCHW\"}"
)
KEY="gpu"
# Measure options: AutoTVM's GPU recommendation is min_repeat_ms >= 100-150.
NUMBER="${NUMBER:-4}"
REPEAT="${REPEAT:-3}"
MIN_REPEAT_MS="${MIN_REPEAT_MS:-150}"
TIMEOUT="${TIMEOUT:-30}"
SANDBOX="${SANDBOX:-auto}"
# ------------------------------------------------------------------------------

TRIALS=300
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
    -h|--help) usage 0 ;;
    *) echo "gpu_bench.sh: unknown argument $1" >&2; usage 2 ;;
  esac
done
[[ "$TRIALS" =~ ^[0-9]+$ && "$TRIALS" -gt 0 ]] || { echo "gpu_bench.sh: --trials must be a positive integer" >&2; exit 2; }
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
  //device_agent:tunefleet_runner //tuner_process:tunefleet_tuner \
  //bench:gpu_info //bench:cublas_sgemm
BIN="$("$BAZEL" info bazel-bin 2>/dev/null)"
export TUNEFLEET_RUNNER="$BIN/device_agent/tunefleet_runner"
TUNEFLEET=("$BIN/cli/tunefleet")

for template in $DENSE_TEMPLATE $CONV_TEMPLATE; do
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
UP_PID="" AGENT_PID=""
stop_fleet() {
  [[ -n "$AGENT_PID" ]] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null || true
  [[ -n "$UP_PID" ]] && kill "$UP_PID" 2>/dev/null && wait "$UP_PID" 2>/dev/null || true
  AGENT_PID="" UP_PID=""
}
trap stop_fleet EXIT
trap 'exit 130' INT TERM

log "fleet in $FLEET_DIR: tracker, 1 builder, 1 tuner (tunefleet up --agents 0) and a GPU agent on key $KEY"
rm -f "$FLEET_DIR/address"
"${TUNEFLEET[@]}" up --fleet_dir "$FLEET_DIR" --agents 0 --key "$KEY" >"$FLEET_DIR/up.log" 2>&1 &
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
  # A sandboxed runner child that the CUDA driver trips (device_agent/sandbox.h)
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

RESULTS="$FLEET_DIR/results.tsv"
: >"$RESULTS"
for task in "${TASKS[@]}"; do
  IFS='|' read -r name workload template args <<<"$task"
  log "$name: $workload $args, template $template, target \"$TARGET\", $TRIALS trials ($TUNER)"
  job="$("${TUNEFLEET[@]}" submit "${FLEET[@]}" --key "$KEY" --workload "$workload" --args "$args" \
    --template_name "$template" --target "$TARGET" --tuner "$TUNER" --trials "$TRIALS" \
    --number "$NUMBER" --repeat "$REPEAT" --min_repeat_ms "$MIN_REPEAT_MS" \
    --timeout "$TIMEOUT" --name "$name")"
  status=ok
  "${TUNEFLEET[@]}" watch "${FLEET[@]}" --job "$job" >&2 || status="job $job did not succeed"
  best=""
  if best_out="$("${TUNEFLEET[@]}" best "${FLEET[@]}" --job "$job" 2>&1)"; then
    best="$(head -1 <<<"$best_out" | awk '{print $1}')"
  else
    reason="no best record: $(head -1 <<<"$best_out")"
    if [[ "$status" == ok ]]; then status="$reason"; else status="$status; $reason"; fi
  fi
  "${TUNEFLEET[@]}" export "${FLEET[@]}" --job "$job" --log "$FLEET_DIR/records.jsonl" >&2 || true
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$workload" "$template" "$args" "$job" "${best:-}" "$status" >>"$RESULTS"
done

# The reference runs with the fleet stopped, so nothing else is on the GPU.
stop_fleet
log "cuBLAS SGEMM ${DENSE_M}x${DENSE_N}x${DENSE_K} on GPU $DEVICE"
CUBLAS_JSON="$FLEET_DIR/cublas.json"
if ! "$BIN/bench/cublas_sgemm" --m "$DENSE_M" --n "$DENSE_N" --k "$DENSE_K" --device "$DEVICE" \
     --json "$CUBLAS_JSON" >&2; then
  echo "gpu_bench.sh: cuBLAS reference failed; reporting without it" >&2
  echo '{}' >"$CUBLAS_JSON"
fi

python3 - "$RESULTS" "$CUBLAS_JSON" "$GPU_JSON" "$JSON_OUT" "$TARGET" "$TRIALS" "$TUNER" \
  "$NUMBER" "$REPEAT" "$MIN_REPEAT_MS" "$TIMEOUT" "$FLEET_DIR" "$SANDBOX_NOTE" <<'EOF'
import json, sys, datetime
(results_path, cublas_path, gpu_json, out_path, target, trials, tuner,
 number, repeat, min_repeat_ms, timeout, fleet_dir, sandbox) = sys.argv[1:]
gpu = json.loads(gpu_json)
cublas = json.load(open(cublas_path))
peak = gpu.get("fp32_peak_gflops")
tasks = []
for line in open(results_path):
    name, workload, template, args, job, best, status = line.rstrip("\n").split("\t")
    tuned = float(best) if best else None
    task = {"name": name, "workload": workload, "args": json.loads(args), "template": template,
            "job": job, "status": status, "tuned_gflops": tuned}
    if workload == "dense" and cublas.get("gflops"):
        task["cublas_gflops"] = cublas["gflops"]
        task["tuned_over_cublas"] = tuned / cublas["gflops"] if tuned else None
    if peak and tuned:
        task["fraction_of_fp32_peak"] = tuned / peak
    tasks.append(task)
report = {
    "date": datetime.datetime.now().isoformat(timespec="seconds"),
    "gpu": gpu, "target": target, "trials": int(trials), "tuner": tuner,
    "measure": {"number": int(number), "repeat": int(repeat),
                "min_repeat_ms": int(min_repeat_ms), "timeout_s": float(timeout)},
    "runner_sandbox": sandbox, "tasks": tasks, "cublas": cublas, "fleet_dir": fleet_dir,
}
with open(out_path, "w") as out:
    json.dump(report, out, indent=2)
    out.write("\n")
fmt = lambda v, f: (f % v) if v is not None else "-"
print(f"\n{gpu['name']} ({gpu['sm']}), FP32 peak {fmt(peak, '%.0f')} GFLOPS; "
      f"{trials} trials per task ({tuner}), target \"{target}\"")
print(f"{'task':<34} {'tuned GFLOPS':>13} {'cuBLAS GFLOPS':>14} {'tuned/cuBLAS':>13} {'of FP32 peak':>13}")
for t in tasks:
    print(f"{t['name']:<34} {fmt(t['tuned_gflops'], '%.1f'):>13} "
          f"{fmt(t.get('cublas_gflops'), '%.1f'):>14} {fmt(t.get('tuned_over_cublas'), '%.3f'):>13} "
          f"{fmt(t.get('fraction_of_fp32_peak') and 100 * t['fraction_of_fp32_peak'], '%.1f%%'):>13}"
          + ("" if t["status"] == "ok" else f"  ({t['status']})"))
if cublas.get("gflops"):
    print(f"cuBLAS SGEMM alone: {cublas['gflops']:.1f} GFLOPS"
          + (f" = {100 * cublas['gflops'] / peak:.1f}% of peak" if peak else ""))
print(f"runner sandbox: {sandbox}")
print(f"JSON: {out_path}; records and logs: {fleet_dir}/")
EOF
