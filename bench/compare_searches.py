#!/usr/bin/env python3
"""Two searches of the same tasks, compared trial by trial.

    bench/compare_searches.py A.jsonl B.jsonl [--at 4,8,16,32]

Reads two TuneFleet record logs (AutoTVM's JSON lines) of the same tasks,
each in the order its tuner measured them (validation lines skipped), and
prints, for each N of --at, the geometric mean over the tasks both logs have
of B's best cost among its first N trials over A's: above 1, A's first N
trials found faster kernels. Failed trials count as trials. The first
trials of a warm start are the same configs in both (pretuned and default),
so the ratio at their count shows the two runs' measurement offset.
"""
import argparse
import json
import math
import sys


def load(path):
    tasks = {}
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
                if rec.get("validation"):
                    continue
                key = (rec["input"][1], json.dumps(rec["input"][2], sort_keys=True))
                costs, error = rec["result"][0], rec["result"][1]
            except (ValueError, KeyError, IndexError, TypeError):
                continue  # a torn or foreign line: not a trial
            tasks.setdefault(key, []).append(sum(costs) / len(costs) if error == 0 else None)
    return tasks


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--at", default="4,8,16,32")
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    for n in [int(x) for x in args.at.split(",")]:
        logs = []
        for key, trials in a.items():
            if key not in b:
                continue
            best_a = [c for c in trials[:n] if c]
            best_b = [c for c in b[key][:n] if c]
            if best_a and best_b:
                logs.append(math.log(min(best_b) / min(best_a)))
        if not logs:
            sys.exit("compare_searches.py: the two logs have no task in common")
        print(f"after {n:>4} trials: B's best / A's best, geomean over {len(logs)} tasks: "
              f"{math.exp(sum(logs) / len(logs)):.3f}")


if __name__ == "__main__":
    main()
