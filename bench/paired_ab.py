#!/usr/bin/python3
"""Two compiled models (the same model compiled two ways) timed in one
process, one run of A then one of B, --pairs times, at --threads: both see
the same phases of a noisy host (other tenants, a slower core), which
separate processes minutes apart do not (bench/compile_ab.py: rounds of one
model spread 30-40 % on a shared 2-core VM, more than most changes it is
asked about). Reports each side's median over its runs, B's speed (A's
median / B's) and the median of the per-pair ratios A/B with its
interquartile range; --out writes them as JSON.

  /usr/bin/python3 bench/paired_ab.py --a /tmp/ab/resnet50_pass --b /tmp/ab/resnet50_stores \\
      --input /tmp/zoo/resnet50_input.npy --threads 2 --pairs 200

Uses the Python client's tunefleet.Model (clients/python) over the runtime
library (bazel build //compiler/runtime:libtunefleet_model.so).
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
import tunefleet  # noqa: E402


def quartiles(values):
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, help="side A: a compile -o directory")
    parser.add_argument("--b", required=True, help="side B: a compile -o directory")
    parser.add_argument("--input", required=True, help=".npy input of the model's first input")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runtime", default=os.path.join(
        ROOT, "bazel-bin/compiler/runtime/libtunefleet_model.so"))
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    x = np.load(args.input).astype(np.float32)
    models = [tunefleet.Model(path, runtime=args.runtime) for path in (args.a, args.b)]
    feeds = []
    for model in models:
        model.threads = args.threads
        feeds.append({model.inputs[0].name: x})
    for _ in range(args.warmup):
        for model, feed in zip(models, feeds):
            model.run(feed)
    times = ([], [])
    for _ in range(args.pairs):
        for side, (model, feed) in enumerate(zip(models, feeds)):
            start = time.perf_counter()
            model.run(feed)
            times[side].append((time.perf_counter() - start) * 1e3)
    for model in models:
        model.close()
    a, b = statistics.median(times[0]), statistics.median(times[1])
    ratios = [ta / tb for ta, tb in zip(*times)]
    low, high = quartiles(ratios)
    result = {"label": args.label or os.path.basename(args.a.rstrip("/")), "threads": args.threads,
              "pairs": args.pairs, "a_ms": a, "b_ms": b, "b_speed": a / b,
              "pair_ratio_median": statistics.median(ratios), "pair_ratio_q1": low,
              "pair_ratio_q3": high}
    print(f"{result['label']:24s} {args.threads}t  A {a:8.3f} ms  B {b:8.3f} ms  "
          f"B speed {a / b:.3f}x  pairs {result['pair_ratio_median']:.3f}x "
          f"[{low:.3f}, {high:.3f}]", flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
