#!/usr/bin/env python3
"""Trials each task's search needed to come within 95 % of its final figure.

    bench/trials_to_95.py RECORDS.jsonl [RECORDS.jsonl ...] [--fraction 0.95]

Reads TuneFleet records (AutoTVM's JSON lines) in file order, groups them by
task (target, template, workload and its args) and prints, per task, the
number of trials, the best mean cost, and the first trial (1-based, in the
order the tuner measured them) whose cost was within --fraction of that best
speed (cost <= best / fraction). Failed trials count as trials, as they cost
search time. Validation lines (the same config measured again) are skipped.
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", nargs="+")
    parser.add_argument("--fraction", type=float, default=0.95)
    parser.add_argument("--json", help="also write the table here as JSON")
    args = parser.parse_args()
    if not 0 < args.fraction <= 1:
        sys.exit("--fraction must be in (0, 1]")

    tasks = {}  # key -> list of (config index, cost or None)
    for path in args.records:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                    target, template, workload, _ = rec["input"]
                    key = (target, template, workload[0], json.dumps(workload[1], sort_keys=True))
                    costs, error = rec["result"][0], rec["result"][1]
                    index = rec["config"]["index"]
                except (ValueError, KeyError, IndexError, TypeError) as e:
                    sys.exit(f"{path}:{number}: not a TuneFleet record ({e})")
                cost = sum(costs) / len(costs) if error == 0 and costs else None
                trials = tasks.setdefault(key, [])
                if any(i == index for i, _ in trials):
                    continue  # a validation pass of a config already counted
                trials.append((index, cost))

    rows = []
    for (target, template, workload, wargs), trials in tasks.items():
        costs = [c for _, c in trials if c is not None and c > 0]
        if not costs:
            continue
        best = min(costs)
        reached = next(n for n, (_, c) in enumerate(trials, 1)
                       if c is not None and c > 0 and c <= best / args.fraction)
        rows.append({"target": target, "template": template, "workload": workload,
                     "args": json.loads(wargs), "trials": len(trials), "best_cost_s": best,
                     "trials_to_fraction": reached})
    print(f"{'trials':>6} {'to %d%%' % round(100 * args.fraction):>7}  {'best ms':>9}  task")
    for r in rows:
        a = r["args"]
        short = ",".join(f"{k}={a[k]}" for k in ("C", "H", "K", "R", "stride_h", "M", "N")
                         if k in a)
        print(f"{r['trials']:>6} {r['trials_to_fraction']:>7}  {1e3 * r['best_cost_s']:>9.4f}  "
              f"{r['workload']}({short}) {r['template']}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
