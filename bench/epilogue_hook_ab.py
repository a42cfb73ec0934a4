#!/usr/bin/env python3
"""Epilogues applied from inside the kernels (`compile --epilogues_in_kernels`:
each kernel calls its step's epilogue on every row or tile it finishes, while
it is in cache) against the default pass after each kernel: the same model
compiled both ways, fresh `tunefleet run` processes alternating, the median
over rounds of each process's median, at each thread count.

  /usr/bin/python3 bench/epilogue_hook_ab.py --models /tmp/zoo/efficientnet_b0.onnx,... \\
      --out bench/results/epilogue_hook_ab.json
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def latency_ms(tunefleet, model_dir, input_path, threads, runs):
    out = subprocess.run([tunefleet, "run", "--model", model_dir, "--input", input_path,
                          "--runs", str(runs), "--threads", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"latency: median ([0-9.]+) ms", out)
    if not match:
        raise RuntimeError(f"no latency in: {out[-300:]}")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tunefleet", default=os.path.join(ROOT, "bazel-bin/cli/tunefleet"))
    parser.add_argument("--models", required=True, help="comma-separated .onnx files; each "
                        "needs <name>_input.npy beside it")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--work_dir", default="/tmp/tunefleet_epilogue_hook_ab")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    rows = []
    for onnx in args.models.split(","):
        name = os.path.basename(onnx)[:-len(".onnx")]
        input_path = onnx[:-len(".onnx")] + "_input.npy"
        dirs = {}
        for side, extra in (("pass", []), ("in_kernels", ["--epilogues_in_kernels"])):
            dirs[side] = os.path.join(args.work_dir, name + "_" + side)
            subprocess.run([args.tunefleet, "compile", "--model", onnx, "-o", dirs[side]] + extra,
                           capture_output=True, text=True, check=True)
        row = {"model": name}
        for threads in (int(t) for t in args.threads.split(",")):
            times = {"pass": [], "in_kernels": []}
            for _ in range(args.rounds):
                for side in ("pass", "in_kernels"):
                    times[side].append(latency_ms(args.tunefleet, dirs[side], input_path,
                                                  threads, args.runs))
            passed = statistics.median(times["pass"])
            inside = statistics.median(times["in_kernels"])
            row[f"threads_{threads}"] = {"pass_ms": passed, "in_kernels_ms": inside,
                                         "in_kernels_vs_pass": passed / inside}
            print(f"{name:20s} {threads}t  pass {passed:8.3f} ms  in kernels {inside:8.3f} ms  "
                  f"speed {passed / inside:.3f}x", flush=True)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
