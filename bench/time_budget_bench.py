#!/usr/bin/env python3
"""Compiled latency against wall-clock tuning time, beside ONNX Runtime.

    bench/time_budget_bench.py --models resnet18,mobilenet_v2 --budgets 0,1,2,5 \
        [--start cold|warm] [--pretuned RECORDS.jsonl] [--onnx_dir DIR] \
        [--threads 2] [--runs 30] [--work_dir /tmp/time_budget] [--json OUT.json]

For each model (an ONNX file of //tuner_core/graph:exported_models, exported by
PyTorch with weights=None and a fixed seed) and each budget in minutes, one
run of `tunefleet optimize --time_budget` with no records from before:
tuning within the budget (then validation), compile, and the compiled
model's median latency timed right before ONNX Runtime's (npm's
onnxruntime-node, same threads, same zero input). Budget 0 compiles with
default configs and times the same way. --start cold: no records at all
(optimize --pretuned=none); warm: each task first measures the records
shipped for this CPU's family (or --pretuned's file, e.g. one without the
model's own runs). Prints, per model, the table and
the first budget whose library beats ONNX Runtime. Every run is a fresh
process; nothing is reused between budgets. With --reference_records, each
model is also compiled with those records (a long search's) and timed the
same way, and every budget's latency is printed against it.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, log):
    with open(log, "w") as out:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=out, text=True, cwd=ROOT)
        out.write(proc.stdout)
    if proc.returncode != 0:
        sys.exit(f"time_budget_bench.py: {' '.join(cmd)} failed ({log}):\n{proc.stdout[-2000:]}")
    return proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    parser.add_argument("--budgets", default="0,1,2,5", help="minutes, comma-separated")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--tuner", default="xgb")
    parser.add_argument("--start", choices=["cold", "warm"], default="cold")
    parser.add_argument("--pretuned", default="",
                        help="warm: this record file instead of the shipped records")
    parser.add_argument("--onnx_dir", default="",
                        help="the models' ONNX files (<model>.onnx); default: the exported "
                             "test models")
    parser.add_argument("--work_dir", default="/tmp/tunefleet_time_budget")
    parser.add_argument("--json", default="")
    parser.add_argument("--reference_records", default="",
                        help="also compile each model with these records (a long search's) and "
                             "time it the same way: the row 'ref', and each budget's latency "
                             "as a fraction of it")
    parser.add_argument("--optimize_flags", default="",
                        help="more flags for optimize, e.g. '--reject_slower_than=0' to time a "
                             "shortcut off (space-separated)")
    parser.add_argument("--bazel_bin", default="",
                        help="binaries built already (then no bazel runs: its server's idle "
                             "work would share the cores with the measurements)")
    args = parser.parse_args()
    bazel_bin = args.bazel_bin
    if not bazel_bin:
        bazel_bin = subprocess.run(["bazel", "info", "bazel-bin"], capture_output=True,
                                   text=True, cwd=ROOT).stdout.strip()
        subprocess.run(["bazel", "build", "//cli:tunefleet", "//kernel_runtime:tunefleet_runner",
                        "//tuner_core/graph:exported_models"], check=True, cwd=ROOT)
    tunefleet = os.path.join(bazel_bin, "cli", "tunefleet")
    os.environ.setdefault("TUNEFLEET_RUNNER",
                          os.path.join(bazel_bin, "kernel_runtime", "tunefleet_runner"))
    os.makedirs(args.work_dir, exist_ok=True)
    budgets = [float(b) for b in args.budgets.split(",")]
    if args.reference_records:
        budgets.append(-1)  # the row 'ref'

    results = []
    for model in args.models.split(","):
        onnx = os.path.join(args.onnx_dir or os.path.join(bazel_bin, "tuner_core", "graph",
                                                          "testdata"), f"{model}.onnx")
        for minutes in budgets:
            out_dir = os.path.join(args.work_dir, f"{model}_{minutes:g}min")
            subprocess.run(["rm", "-rf", out_dir])
            log = out_dir + ".log"
            start = time.time()
            if minutes <= 0:
                os.makedirs(out_dir, exist_ok=True)
                compile_cmd = [tunefleet, "compile", "--model", onnx, "-o", out_dir]
                if minutes < 0:  # the reference: the long search's records
                    compile_cmd += ["--records", os.path.abspath(args.reference_records)]
                run(compile_cmd, log + ".compile")
                # optimize's timing and ONNX Runtime step without tuning: a zero
                # budget is refused, so the untuned library is timed by `run`
                # and ONNX Runtime by the same script optimize uses.
                text = run([tunefleet, "run", "--model", out_dir, "--threads", str(args.threads),
                            "--runs", str(args.runs)], log)
                ours = float(re.search(r"latency: median ([0-9.]+) ms", text).group(1))
                ort = ort_alone(args, onnx, out_dir, log)
            else:
                text = run([tunefleet, "optimize", "--model", onnx, "-o", out_dir,
                            "--time_budget", f"{minutes * 60:g}s", "--threads",
                            str(args.threads), "--runs", str(args.runs), "--tuner", args.tuner,
                            "--pretuned=" + ("none" if args.start == "cold" else
                                             os.path.abspath(args.pretuned) if args.pretuned
                                             else "")] + args.optimize_flags.split(),
                           log)
                ours = float(re.search(r"compiled model: ([0-9.]+) ms", text).group(1))
                m = re.search(r"ONNX Runtime: +([0-9.]+) ms", text)
                ort = float(m.group(1)) if m else None
            wall = time.time() - start
            trials = re.search(r"(\d+) trials in ([0-9.]+) s", text)
            row = {"model": model, "budget_min": minutes, "wall_s": wall,
                   "trials": int(trials.group(1)) if trials else 0,
                   "tuning_s": float(trials.group(2)) if trials else 0.0,
                   "ours_ms": ours, "ort_ms": ort,
                   "speedup_over_ort": ort / ours if ort else None}
            results.append(row)
            label = "ref" if minutes < 0 else f"{minutes:g} min"
            print(f"{model:<14} {label:>8}  {row['trials']:>5} trials "
                  f"{row['tuning_s']:>7.1f} s tuning  ours {ours:8.3f} ms  ORT "
                  f"{(ort or float('nan')):8.3f} ms  "
                  f"{(row['speedup_over_ort'] or float('nan')):.2f}x", flush=True)
    print()
    for model in args.models.split(","):
        rows = [r for r in results if r["model"] == model]
        ref = [r for r in rows if r["budget_min"] < 0]
        rows = [r for r in rows if r["budget_min"] >= 0]
        for r in rows:
            if ref:
                r["vs_reference"] = ref[0]["ours_ms"] / r["ours_ms"]
                print(f"{model}: {r['budget_min']:g} min at {r['vs_reference']:.3f}x the "
                      f"reference records' latency ({ref[0]['ours_ms']:.3f} ms)")
        beat = [r["budget_min"] for r in rows if r["speedup_over_ort"] and r["speedup_over_ort"] > 1]
        print(f"{model}: first budget beating ONNX Runtime: "
              f"{f'{beat[0]:g} min' if beat else 'none of ' + args.budgets + ' min'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "runs": args.runs, "tuner": args.tuner,
                       "optimize_flags": args.optimize_flags,
                       "start": args.start, "pretuned": args.pretuned or
                       ("shipped" if args.start == "warm" else "none"),
                       "cpu": cpu_name(), "results": results}, f, indent=2)
            f.write("\n")


def ort_alone(args, onnx, out_dir, log):
    """ONNX Runtime's median on optimize's zero input (written by a 0-trial
    optimize would need a budget, so write it here as optimize does)."""
    import numpy as np  # Debian's python3-numpy
    module = os.path.join(ROOT, "third_party", "node", "node_modules", "onnxruntime-node")
    if not os.path.isdir(module):
        return None
    import onnx as onnx_lib  # Debian's python3-onnx
    graph = onnx_lib.load(onnx).graph
    initializers = {i.name for i in graph.initializer}
    inp = next(i for i in graph.input if i.name not in initializers)
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    dtype = np.int64 if inp.type.tensor_type.elem_type == 7 else np.float32
    path = os.path.join(out_dir, "input.npy")
    np.save(path, np.zeros(shape, dtype=dtype))
    out = subprocess.run(["node", os.path.join(ROOT, "bench", "compiled_model_bench_ort.js"),
                          "--module", module, "--onnx", onnx, "--input", path, "--threads",
                          str(args.threads), "--runs", str(args.runs)],
                         capture_output=True, text=True)
    with open(log, "a") as f:
        f.write(out.stdout + out.stderr)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line).get("median_ms")
    return None


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


if __name__ == "__main__":
    main()
