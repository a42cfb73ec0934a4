#!/usr/bin/python3
"""The zoo benchmark: every model of tuner_core/graph/zoo_models.py's
representative set (or --models), compiled by `tunefleet compile` and run by
`tunefleet run`, beside ONNX Runtime (npm's onnxruntime-node, installed by
bench/install_onnxruntime.sh) and PyTorch's fastest way (eager, frozen jit or
optimize_for_inference) on the same seeded weights, at each --threads count.

For each model it prints and writes (--out, JSON):
  - whether it compiles, and the compiled model's max relative error against
    PyTorch's output (max |got - expected| / max |expected|), which must be
    at most 1e-4;
  - the median latency of the compiled model, ONNX Runtime and PyTorch, each
    timed in its own fresh process, the three alternating for --rounds
    rounds (the figure: the median over rounds of each process's median);
  - the ratio reference / ours against ONNX Runtime and against PyTorch
    (above 1: we are faster);
  - from a profiled run (each step's median over its runs), the share of
    time outside tuned kernels and the time by kind (tuned kernels, layout
    changes, pooling, other ops).
Then the geomean ratios over the models that compiled.

With --fma_peak (bench/cpu_fma_peak, built by default beside the CLI) it
also measures this CPU's FMA peak at each thread count in the same run and
reports, per model, the share of that peak ONNX Runtime and we reach (the
model's GFLOP as `tunefleet tasks` counts its tuned operators) and the
ceiling: the ratio to ONNX Runtime of a model running at the full peak,
the most any implementation could reach on this machine.

With records, the compiled model's latency at the thread count the records
were measured at (every core) is also set against the sum of its layers'
kernels' own times as the records give them (vs_kernels_sum: 1.0 means it
costs what its kernels do). Those figures were measured when the model was
tuned; on a host whose speed drifts, the profiled run's own comparison is
the fair one (vs_kernels_alone, with or without records): `tunefleet run
--profile` calls each kernel step back to back on its buffers, as the time
evaluator does, in rounds alternating with whole runs of the model, and
reports the model's median over the sum of its kernels' medians; and the
same with every kernel call timed after the weights it reads are flushed
from the caches (vs_kernels_cold_weights, the column xcoldw), as the model
meets them once its weights outgrow the caches.

Without --records every layer runs its template's default config (untuned);
--records FILE (JSON lines, `tunefleet tune --model ... --log FILE`) applies
the best record per layer. --tune_trials N tunes each model first with a
fixed budget (selective tuning: XGBoost on each cluster's representative,
its top 3 to the others, then each task's own tuner up to N trials in all;
every winner re-measured before it is recorded) and reports the tuning's
wall time; the records and times are kept in --work_dir/tuned/, so a later
run (--tune_only first, say) benchmarks them without tuning again.

  /usr/bin/python3 bench/zoo_bench.py --tunefleet bazel-bin/cli/tunefleet \\
      --threads 1,2 --rounds 3 --out bench/results/zoo_untuned.json

Nothing is downloaded: the models are exported with weights=None from a
fixed seed into --work_dir.
"""
import argparse
import importlib.util
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_REL_ERROR = 1e-4


def load_zoo():
    spec = importlib.util.spec_from_file_location(
        "zoo_models", os.path.join(ROOT, "tuner_core", "graph", "zoo_models.py"))
    zoo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(zoo)
    return zoo


def run(cmd, env=None, timeout=1800, stdout_only=False):
    started = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    text = done.stdout if stdout_only else done.stdout + done.stderr
    return done.returncode, text, time.time() - started


def threads_env(threads):
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    env["OMP_WAIT_POLICY"] = "PASSIVE"  # REFERENCES.md: OpenMP and OpenBLAS pools fight otherwise
    return env


def ours_ms(args, lib, input_path, threads):
    code, out, _ = run([args.tunefleet, "run", "--model", lib, "--input", input_path,
                        "--runs", str(args.runs), "--threads", str(threads)],
                       env=threads_env(threads))
    if code != 0:
        raise RuntimeError(out.strip().splitlines()[-1] if out.strip() else f"exit {code}")
    match = re.search(r"median ([0-9.]+) ms", out)
    if not match:
        raise RuntimeError(f"no median in: {out[-300:]}")
    return float(match.group(1))


def ort_ms(args, onnx_path, input_path, expected_path, threads):
    if not os.path.isdir(args.onnxruntime_node):
        return None, "onnxruntime-node not installed (bench/install_onnxruntime.sh)"
    code, out, _ = run(["node", os.path.join(ROOT, "bench", "compiled_model_bench_ort.js"),
                        "--module", args.onnxruntime_node, "--onnx", onnx_path,
                        "--input", input_path, "--expected", expected_path,
                        "--threads", str(threads), "--runs", str(args.runs)],
                       env=threads_env(threads), stdout_only=True)
    try:
        result = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"onnxruntime failed: {out[-300:]}"
    if "error" in result:
        return None, f"onnxruntime: {result['error']}"
    return result["median_ms"], ""


def torch_ms(args, name, threads):
    code, out, _ = run([sys.executable, __file__, "--torch_child", name, "--threads",
                        str(threads), "--runs", str(args.runs), "--batch", str(args.batch)],
                       env=threads_env(threads), stdout_only=True)
    try:
        result = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"pytorch failed: {out[-300:]}"
    return min(v for k, v in result.items() if k in ("eager", "jit", "ofi")), ""


def torch_child(name, threads, runs, batch):
    """Prints PyTorch's median ms of the three ways (compiled_model_bench_torch.py's)."""
    import torch  # pylint: disable=import-outside-toplevel
    spec = importlib.util.spec_from_file_location(
        "compiled_model_bench_torch", os.path.join(ROOT, "bench", "compiled_model_bench_torch.py"))
    timing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(timing)
    torch.set_num_threads(threads)
    built = load_zoo().build(name, batch=batch)
    try:
        result = timing.three_ways_ms(built.model.eval(), built.example, runs)
    except Exception as error:  # a model that does not trace: eager still counts
        result = {"eager": timing.median_ms(built.model.eval(), built.example, runs),
                  "trace_error": str(error)[:200]}
    print(json.dumps(result))


def profile(args, lib, input_path, threads):
    code, out, _ = run([args.tunefleet, "run", "--model", lib, "--input", input_path,
                        "--runs", "20", "--threads", str(threads), "--profile"],
                       env=threads_env(threads))
    kinds = {}
    for line in out.splitlines():
        match = re.match(r"^(tuned kernels \(NCHW\)|tuned kernels|layout changes|pooling|"
                         r"other ops|kernel epilogues|total|mean total)\s+([0-9.]+) ms", line)
        if match:
            kinds[match.group(1)] = float(match.group(2))
        cold = re.match(r"^kernels, cold weights\s+([0-9.]+) ms .*the model in the same rounds "
                        r"([0-9.]+) ms", line)
        if cold:
            kinds["kernels_cold_weights_ms"] = float(cold.group(1))
            if kinds["kernels_cold_weights_ms"] > 0:
                kinds["vs_kernels_cold_weights"] = (float(cold.group(2)) /
                                                  kinds["kernels_cold_weights_ms"])
        alone = re.match(r"^kernels alone\s+([0-9.]+) ms .*the model in the same rounds "
                         r"([0-9.]+) ms", line)
        if alone:
            kinds["kernels_alone_ms"] = float(alone.group(1))
            kinds["model_same_rounds_ms"] = float(alone.group(2))
            if kinds["kernels_alone_ms"] > 0:
                kinds["vs_kernels_alone"] = (kinds["model_same_rounds_ms"] /
                                             kinds["kernels_alone_ms"])
    total = kinds.get("total", 0.0)
    tuned = kinds.get("tuned kernels", 0.0) + kinds.get("tuned kernels (NCHW)", 0.0)
    # Epilogues run inside kernel steps but are not the tuned kernel's own time.
    inside = tuned - kinds.get("kernel epilogues", 0.0)
    # Each step's time is its median over the runs (run --profile); "mean
    # total", the steps' means summed, stalls included, is kept beside.
    kinds["outside_tuned_share"] = (total - inside) / total if total > 0 else None
    return kinds


def rel_error(got_path, expected_path):
    import numpy as np  # pylint: disable=import-outside-toplevel
    got, expected = np.load(got_path), np.load(expected_path)
    if got.shape != expected.shape:
        return float("inf")
    scale = float(np.abs(expected).max())
    return float(np.abs(got - expected).max()) / scale if scale > 0 else float(
        np.abs(got - expected).max())


def bench_model(args, zoo, name, threads_list):
    row = {"model": name, "batch": args.batch}
    # Batch N: a dynamic-batch export (ONNX Runtime needs one), which we
    # compile at N with --input_shape.
    folder = args.work_dir if args.batch == 1 else os.path.join(args.work_dir, f"batch{args.batch}")
    os.makedirs(folder, exist_ok=True)
    onnx_path = os.path.join(folder, name + ".onnx")
    input_path = os.path.join(folder, name + "_input.npy")
    expected_path = os.path.join(folder, name + "_expected.npy")
    if not os.path.exists(onnx_path):
        zoo.export(name, folder, opset=args.opset, reference=True, batch=args.batch,
                   dynamic_batch=args.batch > 1)
    lib = os.path.join(folder, "out_" + name)
    shape_flags = []
    if args.batch > 1:
        import numpy as np  # pylint: disable=import-outside-toplevel
        dims = np.load(input_path).shape
        shape_flags = ["--input_shape", "input=" + ",".join(str(d) for d in dims)]
    cmd = [args.tunefleet, "compile", "--model", onnx_path, "-o", lib] + shape_flags
    records = args.records
    if args.tune_trials > 0:
        records, tuning = tune_model(args, name, onnx_path, folder, shape_flags)
        row["tuning"] = tuning
        if "error" in tuning:
            row["error"] = "tune: " + tuning["error"]
            return row
        if args.tune_only:
            return row
    if records:
        cmd += ["--records", records]
    code, out, seconds = run(cmd)
    row["compile_seconds"] = round(seconds, 1)
    if code != 0:
        row["error"] = (out.strip().splitlines() or ["?"])[-1][:400]
        return row
    got_path = os.path.join(lib, "got.npy")
    code, out, _ = run([args.tunefleet, "run", "--model", lib, "--input", input_path,
                        "--output", got_path, "--runs", "1"])
    if code != 0:
        row["error"] = "run: " + (out.strip().splitlines() or ["?"])[-1][:400]
        return row
    row["max_rel_error"] = rel_error(got_path, expected_path)
    row["gflop"], layers = model_tasks(args, onnx_path, shape_flags)
    if records:
        row["kernels_sum_ms"] = kernels_sum_ms(args, layers, records)
    row["correct"] = row["max_rel_error"] <= MAX_REL_ERROR
    if args.check_only:
        return row
    for threads in threads_list:
        ours, ort, torch_ = [], [], []
        notes = set()
        for _ in range(args.rounds):
            ours.append(ours_ms(args, lib, input_path, threads))
            ms, note = ort_ms(args, onnx_path, input_path, expected_path, threads)
            if ms is not None:
                ort.append(ms)
            elif note:
                notes.add(note)
            ms, note = torch_ms(args, name, threads)
            if ms is not None:
                torch_.append(ms)
            elif note:
                notes.add(note)
        entry = {"ours_ms": statistics.median(ours)}
        if ort:
            entry["ort_ms"] = statistics.median(ort)
            entry["vs_ort"] = entry["ort_ms"] / entry["ours_ms"]
        if torch_:
            entry["torch_ms"] = statistics.median(torch_)
            entry["vs_torch"] = entry["torch_ms"] / entry["ours_ms"]
        if notes:
            entry["notes"] = sorted(notes)
        entry["profile"] = profile(args, lib, input_path, threads)
        add_ceiling(entry, row.get("gflop"), args.peaks.get(threads))
        if row.get("kernels_sum_ms") and threads == os.cpu_count():
            # The records were measured on every core: the model against
            # the sum of its kernels' own times at the same thread count.
            entry["vs_kernels_sum"] = entry["ours_ms"] / row["kernels_sum_ms"]
        row[f"threads_{threads}"] = entry
    return row


def model_tasks(args, onnx_path, shape_flags):
    """From `tunefleet tasks`: the GFLOP per inference of the model's tuned
    operators (or None) and {workload: its layers}."""
    code, out, _ = run([args.tunefleet, "tasks", "--model", onnx_path] + shape_flags)
    if code != 0:
        return None, {}
    match = re.search(r"([0-9.]+) GFLOP per inference", out)
    layers = {}
    for line in out.splitlines():
        task = re.match(r"\s*\d+\s+(\d+)\s+[0-9.]+\s+[0-9.]+%\s+(\S+\(.*\))\s*$", line)
        if task:
            layers[task.group(2)] = int(task.group(1))
    return (float(match.group(1)) if match else None), layers


def kernels_sum_ms(args, layers, records):
    """The sum over the model's layers ({workload: layers}, model_tasks) of
    its tuned kernels' own times (the best record of each task, `tunefleet
    best`), as the records were measured (every core); None when a task has
    no record."""
    if not layers:
        return None
    code, out, _ = run([args.tunefleet, "best", "--log", records])
    if code != 0:
        return None
    best, workload = {}, None
    for line in out.splitlines():
        header = re.match(r"\S+ (\S+\(.*\)) on ", line)
        if header:
            workload = header.group(1)
            continue
        cost = re.match(r"\s+[0-9.]+ GFLOPS, ([0-9.]+) ms", line)
        if cost and workload is not None:
            best.setdefault(workload, float(cost.group(1)))
    if any(w not in best for w in layers):
        return None
    return sum(n * best[w] for w, n in layers.items())


def fma_peaks(args, threads_list):
    """{threads: GFLOPS} of this CPU's FMA peak (bench/cpu_fma_peak), or {}."""
    if not args.fma_peak or not os.path.exists(args.fma_peak):
        return {}
    peaks = {}
    for threads in threads_list:
        code, out, _ = run([args.fma_peak, str(threads), "5"], stdout_only=True)
        if code == 0:
            peaks[threads] = json.loads(out)["gflops"]
    return peaks


def add_ceiling(entry, gflop, peak):
    """Adds the shares of the FMA peak and the ceiling vs ONNX Runtime."""
    if not gflop or not peak:
        return
    entry["ours_peak_share"] = gflop / (entry["ours_ms"] / 1e3) / peak
    if "ort_ms" in entry:
        entry["ort_peak_share"] = gflop / (entry["ort_ms"] / 1e3) / peak
        entry["ceiling_vs_ort"] = 1 / entry["ort_peak_share"]


def tune_model(args, name, onnx_path, folder, shape_flags):
    """Tunes `name` once with the fixed budget (kept in folder/tuned/):
    its records file and {seconds, trials, command}."""
    folder = os.path.join(folder, "tuned")
    os.makedirs(folder, exist_ok=True)
    log = os.path.join(folder, name + ".jsonl")
    report = os.path.join(folder, name + ".tune.json")
    if os.path.exists(report):
        with open(report, encoding="utf-8") as f:
            return log, json.load(f)
    if os.path.exists(log):
        os.remove(log)  # a tuning that did not finish: start again
    n = args.tune_trials
    cmd = [args.tunefleet, "tune", "--model", onnx_path, "--tuner", "xgb", "--trials", str(n),
           "--selective", "top3", "--selective_followup", str(max(0, n - 3)), "--log", log
           ] + shape_flags + shlex.split(args.tune_flags)
    code, out, seconds = run(cmd, timeout=3 * 3600)
    tuning = {"seconds": round(seconds, 1), "trials_per_task": n, "command": " ".join(cmd)}
    if code != 0:
        tuning["error"] = (out.strip().splitlines() or ["?"])[-1][:400]
        return log, tuning
    with open(log, encoding="utf-8") as f:
        tuning["trials"] = sum(1 for line in f if line.strip())
    with open(report, "w", encoding="utf-8") as f:
        json.dump(tuning, f)
    return log, tuning


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tunefleet", default=os.path.join(ROOT, "bazel-bin/cli/tunefleet"))
    parser.add_argument("--models", default="", help="comma-separated; default: representative")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--opset", type=int, default=14)
    parser.add_argument("--batch", type=int, default=1,
                        help="batch size (above 1: a dynamic-batch export, ours compiled at it)")
    parser.add_argument("--records", default="")
    parser.add_argument("--tune_trials", type=int, default=0,
                        help="tune each model first, at most this many trials per task")
    parser.add_argument("--tune_flags", default="",
                        help="more flags for each `tunefleet tune` (e.g. --pretuned=FILE)")
    parser.add_argument("--check_only", action="store_true",
                        help="compile and check against PyTorch only (no timing): --opset 13/17 sweeps")
    parser.add_argument("--tune_only", action="store_true",
                        help="with --tune_trials: tune (or reuse the tuning), benchmark nothing")
    parser.add_argument("--work_dir", default="/tmp/tunefleet_zoo_bench")
    parser.add_argument("--onnxruntime_node",
                        default=os.path.join(ROOT, "third_party/node/node_modules/onnxruntime-node"))
    parser.add_argument("--fma_peak", default=os.path.join(ROOT, "bazel-bin/bench/cpu_fma_peak"),
                        help="bench/cpu_fma_peak: measure the FMA peak (empty: skip)")
    parser.add_argument("--out", default="")
    parser.add_argument("--torch_child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_child:
        torch_child(args.torch_child, int(args.threads), args.runs, args.batch)
        return 0
    zoo = load_zoo()
    names = [m for m in args.models.split(",") if m] or list(zoo.REPRESENTATIVE)
    threads_list = [int(t) for t in args.threads.split(",")]
    args.peaks = {} if args.check_only else fma_peaks(args, threads_list)
    rows = []
    for name in names:
        try:
            row = bench_model(args, zoo, name, threads_list)
        except Exception as error:  # one model's failure must not hide the rest
            row = {"model": name, "error": f"{type(error).__name__}: {error}"[:400]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    summary = {"models": len(rows), "compiled_and_correct": sum(1 for r in rows if r.get("correct"))}
    if args.tune_trials > 0:
        summary["tune_trials_per_task"] = args.tune_trials
        summary["tune_seconds_total"] = round(
            sum(r.get("tuning", {}).get("seconds", 0) for r in rows), 1)
    for threads in threads_list:
        key = f"threads_{threads}"
        summary[f"geomean_vs_ort_{threads}t"] = geomean(
            [r[key].get("vs_ort") for r in rows if key in r])
        summary[f"geomean_vs_torch_{threads}t"] = geomean(
            [r[key].get("vs_torch") for r in rows if key in r])
        over = [r[key]["vs_kernels_sum"] for r in rows if "vs_kernels_sum" in r.get(key, {})]
        if over:
            summary[f"max_vs_kernels_sum_{threads}t"] = max(over)
            summary[f"geomean_vs_kernels_sum_{threads}t"] = geomean(over)
        alone = [r[key]["profile"]["vs_kernels_alone"] for r in rows
                 if "vs_kernels_alone" in r.get(key, {}).get("profile", {})]
        if alone:
            summary[f"max_vs_kernels_alone_{threads}t"] = max(alone)
            summary[f"geomean_vs_kernels_alone_{threads}t"] = geomean(alone)
        cold = [r[key]["profile"]["vs_kernels_cold_weights"] for r in rows
                if "vs_kernels_cold_weights" in r.get(key, {}).get("profile", {})]
        if cold:
            summary[f"max_vs_kernels_cold_weights_{threads}t"] = max(cold)
            summary[f"geomean_vs_kernels_cold_weights_{threads}t"] = geomean(cold)
        if threads in args.peaks:
            summary[f"fma_peak_gflops_{threads}t"] = args.peaks[threads]
            summary[f"geomean_ceiling_vs_ort_{threads}t"] = geomean(
                [r[key].get("ceiling_vs_ort") for r in rows if key in r])
        summary[f"max_outside_tuned_share_{threads}t"] = max(
            (r[key]["profile"].get("outside_tuned_share") or 0 for r in rows if key in r),
            default=None)
    print("\n%-20s %8s %10s" % ("model", "relerr", "tune/compile") +
          "".join(" | %dt: ours ms   ORT  torch  xORT xtorch outside xkernels xcoldw ceiling" % t
                  for t in threads_list))
    for r in rows:
        if "error" in r:
            print("%-20s  %s" % (r["model"], r["error"]))
            continue
        if "max_rel_error" in r and args.check_only:
            print("%-20s %8.1e %9.1fs" % (r["model"], r["max_rel_error"], r["compile_seconds"]))
            continue
        if "max_rel_error" not in r:  # --tune_only
            print("%-20s tuned in %.1f s, %s trials" % (
                r["model"], r["tuning"]["seconds"], r["tuning"].get("trials")))
            continue
        seconds = r["compile_seconds"] + r.get("tuning", {}).get("seconds", 0)
        line = "%-20s %8.1e %9.1fs" % (r["model"], r["max_rel_error"], seconds)
        for t in threads_list:
            e = r.get(f"threads_{t}", {})
            line += " | %10.2f %6s %6s %5s %5s %6s %8s %6s %7s" % (
                e.get("ours_ms", float("nan")),
                "%.2f" % e["ort_ms"] if "ort_ms" in e else "-",
                "%.2f" % e["torch_ms"] if "torch_ms" in e else "-",
                "%.2f" % e["vs_ort"] if "vs_ort" in e else "-",
                "%.2f" % e["vs_torch"] if "vs_torch" in e else "-",
                "%.0f%%" % (100 * e["profile"]["outside_tuned_share"])
                if e.get("profile", {}).get("outside_tuned_share") is not None else "-",
                "%.2f" % e["profile"]["vs_kernels_alone"]
                if "vs_kernels_alone" in e.get("profile", {}) else "-",
                "%.2f" % e["profile"]["vs_kernels_cold_weights"]
                if "vs_kernels_cold_weights" in e.get("profile", {}) else "-",
                "%.2f" % e["ceiling_vs_ort"] if "ceiling_vs_ort" in e else "-")
        print(line)
    print(json.dumps(summary))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"cpu": cpu_model(), "rows": rows, "summary": summary}, f, indent=1)
    return 0


def cpu_model():
    info = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key in ("model name", "cpu family", "model") and key not in info:
                    info[key] = value
                if key == "flags" and "avx512f" not in info:
                    info["avx512f"] = "avx512f" in value.split()
    except OSError:
        pass
    info["cores"] = os.cpu_count()
    return info


if __name__ == "__main__":
    sys.exit(main())
