#!/usr/bin/env python3
"""Two ways of compiling the same models, A and B, against each other: each
model compiled by each side (its own `tunefleet` binary and compile flags:
two revisions, or one binary with and without a flag), then fresh
`tunefleet run` processes alternating A, B, A, B, ... for --rounds rounds at
each thread count; the figure is the median over rounds of each process's
median latency, and B's speed = A's time / B's time (above 1: B is faster).

  # two revisions (the base built in a worktree), default configs:
  /usr/bin/python3 bench/compile_ab.py --a_tunefleet /tmp/base/bazel-bin/cli/tunefleet \\
      --models /tmp/zoo/resnet18.onnx,/tmp/zoo/regnet_y_400mf.onnx --threads 2
  # one binary, a compile flag on side B:
  /usr/bin/python3 bench/compile_ab.py --b_flags=--epilogues_in_kernels --models ...
  # "{name}" in the flags is each model's name (its records, say):
  ... --a_flags="--records /tmp/zoo/tuned/{name}.jsonl" ...

Each model needs <name>_input.npy beside its .onnx (bench/zoo_bench.py
writes both into its --work_dir).
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TUNEFLEET = os.path.join(ROOT, "bazel-bin/cli/tunefleet")


def latency_ms(tunefleet, model_dir, input_path, threads, runs):
    out = subprocess.run([tunefleet, "run", "--model", model_dir, "--input", input_path,
                          "--runs", str(runs), "--threads", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"latency: median ([0-9.]+) ms", out)
    if not match:
        raise RuntimeError(f"no latency in: {out[-300:]}")
    return float(match.group(1))


def compare(sides, models, threads_list, rounds, runs, work_dir):
    """sides: [(label, tunefleet, [compile flags])] of two; returns the rows."""
    os.makedirs(work_dir, exist_ok=True)
    (a_label, _, _), (b_label, _, _) = sides
    rows = []
    for onnx in models:
        name = os.path.basename(onnx)[:-len(".onnx")]
        input_path = onnx[:-len(".onnx")] + "_input.npy"
        dirs = {}
        for label, tunefleet, flags in sides:
            dirs[label] = os.path.join(work_dir, name + "_" + label)
            flags = [f.replace("{name}", name) for f in flags]
            subprocess.run([tunefleet, "compile", "--model", onnx, "-o", dirs[label]] + flags,
                           capture_output=True, text=True, check=True)
        row = {"model": name}
        for threads in threads_list:
            times = {label: [] for label, _, _ in sides}
            for _ in range(rounds):
                for label, tunefleet, _ in sides:
                    times[label].append(latency_ms(tunefleet, dirs[label], input_path, threads,
                                                   runs))
            a = statistics.median(times[a_label])
            b = statistics.median(times[b_label])
            row[f"threads_{threads}"] = {f"{a_label}_ms": a, f"{b_label}_ms": b,
                                         f"{b_label}_vs_{a_label}": a / b,
                                         "rounds": times}
            print(f"{name:20s} {threads}t  {a_label} {a:8.3f} ms  {b_label} {b:8.3f} ms  "
                  f"speed {a / b:.3f}x", flush=True)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", required=True, help="comma-separated .onnx files")
    parser.add_argument("--a_label", default="base")
    parser.add_argument("--a_tunefleet", default=DEFAULT_TUNEFLEET)
    parser.add_argument("--a_flags", default="", help="compile flags of side A")
    parser.add_argument("--b_label", default="new")
    parser.add_argument("--b_tunefleet", default=DEFAULT_TUNEFLEET)
    parser.add_argument("--b_flags", default="", help="compile flags of side B")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--work_dir", default="/tmp/tunefleet_compile_ab")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    sides = [(args.a_label, args.a_tunefleet, shlex.split(args.a_flags)),
             (args.b_label, args.b_tunefleet, shlex.split(args.b_flags))]
    if args.a_label == args.b_label:
        parser.error("the two sides need different labels")
    rows = compare(sides, args.models.split(","), [int(t) for t in args.threads.split(",")],
                   args.rounds, args.runs, args.work_dir)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
