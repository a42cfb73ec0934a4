#!/usr/bin/python3
"""Selects the records shipped with the project (tuner_core/pretuned/data).

From tuning logs (the record format of `tunefleet tune --log`), keeps per
task (template, workload name and args) the `--top` fastest distinct configs
that ran without error, the validated cost where the config was validated,
else its mean cost, and writes them as record lines sorted by template,
workload and cost, without the measurement's spread. Every input log must be
of one CPU family: the output file is named by that family, e.g.

  scripts/pretuned_select.py --top 3 -o tuner_core/pretuned/data/x86_64-avx512.jsonl \\
      /tmp/zoo3/tuned/*.jsonl
"""
import argparse
import json
import sys


def reported_cost(record):
    validation = record.get("validation")
    if validation and validation.get("cost_s", 0) > 0 and validation.get("failed_passes", 1) == 0:
        return validation["cost_s"]
    costs, error_no = record["result"][0], record["result"][1]
    if error_no != 0 or not costs:
        return None
    return sum(costs) / len(costs)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=3, help="configs kept per task")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("logs", nargs="+")
    args = parser.parse_args()

    tasks = {}  # (template, workload json) -> {config json: (cost, record)}
    targets = set()
    for path in args.logs:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    record = json.loads(line)
                    target, template, workload, _ = record["input"]
                    cost = reported_cost(record)
                except (ValueError, KeyError, TypeError) as e:
                    print(f"{path}:{number}: skipped ({e})", file=sys.stderr)
                    continue
                if cost is None:
                    continue
                targets.add(target)
                key = (template, json.dumps(workload, sort_keys=True))
                config = json.dumps(record["config"]["entity"], sort_keys=True)
                kept = tasks.setdefault(key, {})
                if config not in kept or cost < kept[config][0]:
                    kept[config] = (cost, record)

    lines = []
    for key in sorted(tasks):
        ranked = sorted(tasks[key].values(), key=lambda kept: kept[0])[: args.top]
        for cost, record in ranked:
            out = {
                "input": record["input"],
                "config": record["config"],
                "result": [[cost], 0, record["result"][2], record["result"][3]],
                "version": record.get("version", 0.2),
                "tvm_version": record.get("tvm_version", "tunefleet-0.1"),
            }
            lines.append(json.dumps(out, separators=(",", ":")))
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} records of {len(tasks)} tasks from {len(args.logs)} logs "
          f"(targets: {', '.join(sorted(targets))}) -> {args.output}")


if __name__ == "__main__":
    main()
