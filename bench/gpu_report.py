#!/usr/bin/env python3
"""bench/gpu_bench.sh's report: tuned figures beside cuBLAS and cuDNN.

    bench/gpu_report.py --results results.tsv [--cublas NAME=cublas.json ...]
        [--references references.json] --gpu GPU_JSON --json OUT.json
        [--fleet_dir DIR] [--target T] [--tuner NAME] [--measure TEXT] [--sandbox TEXT]

results.tsv has one line per tuning job (gpu_bench.sh writes it): name,
workload, template, args (JSON), job, validated best GFLOPS, status, trials,
wall seconds. The records of job J are read from DIR/records_J.jsonl to find
the trial (and the wall seconds since the job's first trial) at which the
search first came within 90 % of the job's final figure. Dense tasks are set
against the faster of bench/cublas_sgemm and PyTorch's FP32 matmul (TF32
off); conv layers, the faster of the two conv templates per layer, against
cuDNN's FP32 in its faster layout; the conv geomean covers the layers that
have both figures.
"""
import argparse
import datetime
import json
import math
import os
import sys

FRACTION = 0.9


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def search_progress(path, final_gflops, flops):
    """(trial, seconds) at which the search's figure first reached FRACTION of
    final_gflops, counting failed trials; validation re-measurements (a config
    seen before) are not trials. Trials are counted in the file's order (the
    order the tuner received them); seconds run from the earliest trial's
    start (its timestamp less its own cost) to the time the reaching trial
    finished."""
    if not final_gflops or not flops or not os.path.exists(path):
        return None, None
    trials = []  # (gflops or None, finished, started), first sight of each config
    seen = set()
    with open(path) as f:
        for line in f:
            try:
                record = json.loads(line)
                index = record["config"]["index"]
                costs, error, all_cost, stamp = record["result"][:4]
            except (ValueError, KeyError, TypeError):
                continue
            if index in seen:
                continue
            seen.add(index)
            gflops = flops / (sum(costs) / len(costs)) / 1e9 if error == 0 and costs else None
            trials.append((gflops, stamp, stamp - all_cost))
    if not trials:
        return None, None
    start = min(started for _, _, started in trials)
    for number, (gflops, finished, _) in enumerate(trials, 1):
        if gflops is not None and gflops >= FRACTION * final_gflops:
            return number, finished - start
    return None, None


def task_flops(workload, args):
    if workload == "dense":
        return 2 * args["M"] * args["N"] * args["K"]
    if workload == "conv2d_nchw":
        pad, stride = args.get("padding", 0), args.get("stride", 1)
        oh = (args["H"] + 2 * pad - args["R"]) // stride + 1
        ow = (args["W"] + 2 * pad - args["S"]) // stride + 1
        return 2 * args["N"] * args["K"] * oh * ow * args["C"] * args["R"] * args["S"]
    return None


def conv_key(args):
    return (args["C"], args["H"], args["K"], args["R"], args.get("stride", 1),
            args.get("padding", 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", required=True)
    parser.add_argument("--cublas", action="append", default=[])
    parser.add_argument("--references", default="")
    parser.add_argument("--gpu", required=True, help="bench/gpu_info's JSON")
    parser.add_argument("--json", required=True)
    parser.add_argument("--fleet_dir", default="")
    parser.add_argument("--target", default="")
    parser.add_argument("--tuner", default="")
    parser.add_argument("--measure", default="")
    parser.add_argument("--sandbox", default="")
    args = parser.parse_args()

    gpu = json.loads(args.gpu)
    peak = gpu.get("fp32_peak_gflops")
    cublas = {}
    for entry in args.cublas:
        name, _, path = entry.partition("=")
        cublas[name] = read_json(path)
    refs = read_json(args.references) if args.references else {}
    dense_refs = {(d["M"], d["N"], d["K"]): d["gflops"] for d in refs.get("dense", [])
                  if d.get("precision") == "fp32"}
    conv_refs = {(c["C"], c["H"], c["K"], c["R"], c["stride"], c["padding"]): c
                 for c in refs.get("conv", [])}

    tasks = []
    with open(args.results) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 9:
                sys.exit(f"gpu_report.py: malformed line in {args.results}: {line!r}")
            name, workload, template, task_args, job, best, status, trials, wall = fields[:9]
            task_args = json.loads(task_args)
            tuned = float(best) if best else None
            flops = task_flops(workload, task_args)
            task = {"name": name, "workload": workload, "template": template, "args": task_args,
                    "job": job, "status": status, "trials": int(trials) if trials else None,
                    "wall_seconds": int(wall) if wall else None, "tuned_gflops": tuned}
            if tuned and peak:
                task["fraction_of_fp32_peak"] = tuned / peak
            if job and args.fleet_dir:
                trial, seconds = search_progress(
                    os.path.join(args.fleet_dir, f"records_{job}.jsonl"), tuned, flops)
                task["trials_to_90pct"], task["seconds_to_90pct"] = trial, seconds
            if workload == "dense":
                shape = (task_args["M"], task_args["N"], task_args["K"])
                candidates = {"cublas_sgemm": cublas.get(name, {}).get("gflops"),
                              "torch_matmul_fp32": dense_refs.get(shape)}
                candidates = {k: v for k, v in candidates.items() if v}
                if candidates:
                    source = max(candidates, key=candidates.get)
                    task["reference"] = {"library": "cuBLAS FP32 (no TF32)", "via": source,
                                         "gflops": candidates[source], "all": candidates}
            elif workload == "conv2d_nchw":
                ref = conv_refs.get(conv_key(task_args))
                if ref and ref.get("fp32_gflops"):
                    task["reference"] = {"library": "cuDNN FP32 (no TF32)",
                                         "via": f"torch conv2d, {ref['fp32_layout']}",
                                         "gflops": ref["fp32_gflops"]}
            if tuned and task.get("reference"):
                task["tuned_over_reference"] = tuned / task["reference"]["gflops"]
            tasks.append(task)

    # Conv layers: the faster template per layer.
    layers = {}
    for t in tasks:
        if t["workload"] != "conv2d_nchw":
            continue
        layer = layers.setdefault(t["name"], {"name": t["name"], "args": t["args"],
                                              "templates": {}})
        layer["templates"][t["template"]] = t["tuned_gflops"]
        if t.get("reference"):
            layer["reference_gflops"] = t["reference"]["gflops"]
    ratios = []
    for layer in layers.values():
        tuned = {k: v for k, v in layer["templates"].items() if v}
        if tuned:
            layer["best_template"] = max(tuned, key=tuned.get)
            layer["tuned_gflops"] = tuned[layer["best_template"]]
            if layer.get("reference_gflops"):
                layer["tuned_over_cudnn"] = layer["tuned_gflops"] / layer["reference_gflops"]
                ratios.append(layer["tuned_over_cudnn"])
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None

    report = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "gpu": gpu, "target": args.target, "tuner": args.tuner, "measure": args.measure,
        "runner_sandbox": args.sandbox, "tasks": tasks, "conv_layers": list(layers.values()),
        "conv_geomean_over_cudnn_fp32": geomean, "conv_layers_compared": len(ratios),
        "cublas_sgemm": cublas, "references": refs, "fleet_dir": args.fleet_dir,
    }
    with open(args.json, "w") as out:
        json.dump(report, out, indent=2)
        out.write("\n")

    fmt = lambda v, f: (f % v) if v is not None else "-"
    print(f"\n{gpu.get('name')} ({gpu.get('sm')}), FP32 peak {fmt(peak, '%.0f')} GFLOPS; "
          f"tuner {args.tuner}, target \"{args.target}\"; {args.measure}")
    print(f"{'task':<20} {'template':<20} {'trials':>6} {'tuned GFLOPS':>13} {'reference':>10} "
          f"{'ratio':>6} {'of peak':>8} {'90% at trial':>13} {'(s)':>6}")
    for t in tasks:
        ref = t.get("reference", {}).get("gflops")
        print(f"{t['name']:<20} {t['template']:<20} {fmt(t['trials'], '%d'):>6} "
              f"{fmt(t['tuned_gflops'], '%.1f'):>13} {fmt(ref, '%.1f'):>10} "
              f"{fmt(t.get('tuned_over_reference'), '%.3f'):>6} "
              f"{fmt(t.get('fraction_of_fp32_peak') and 100 * t['fraction_of_fp32_peak'], '%.1f%%'):>8} "
              f"{fmt(t.get('trials_to_90pct'), '%d'):>13} {fmt(t.get('seconds_to_90pct'), '%.0f'):>6}"
              + ("" if t["status"] == "ok" else f"  ({t['status']})"))
    if layers:
        print("\nconv layers, the faster template each, against cuDNN FP32 (faster layout):")
        for layer in layers.values():
            print(f"  {layer['name']:<14} {layer.get('best_template', '-'):<20} "
                  f"{fmt(layer.get('tuned_gflops'), '%.1f'):>9} GFLOPS vs "
                  f"{fmt(layer.get('reference_gflops'), '%.1f'):>9}: "
                  f"{fmt(layer.get('tuned_over_cudnn'), '%.3f')}")
        print(f"  geomean over {len(ratios)} layers: {fmt(geomean, '%.3f')}x cuDNN")
    for d in refs.get("dense", []) + refs.get("batch_matmul", []):
        shape = "x".join(str(d[k]) for k in ("batch", "M", "N", "K") if k in d)
        print(f"reference {shape} {d['precision']}: {d['gflops']:.0f} GFLOPS (cuBLAS via PyTorch)")
    for r in refs.get("resnet18", []):
        print(f"reference ResNet-18 batch {r['batch']} {r['layout']} fp32 (PyTorch): "
              f"{r['seconds'] * 1e3:.3f} ms")
    print(f"runner sandbox: {args.sandbox}")
    print(f"JSON: {args.json}; records and logs: {args.fleet_dir}/")


if __name__ == "__main__":
    main()
