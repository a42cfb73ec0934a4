#!/usr/bin/python3
"""PyTorch's batch-1 latency for compiled_model_bench: the same seeded model
that tuner_core/graph/export_onnx.py exported (same weights as the ONNX
file), run eager, as a frozen TorchScript trace (jit) and through
torch.jit.optimize_for_inference (ofi), each under inference_mode with 10
warm-ups then --runs timed calls. Prints one JSON object with the median ms
of each way.

  OPENBLAS_NUM_THREADS=2 /usr/bin/python3 bench/compiled_model_bench_torch.py \
      --export tuner_core/graph/export_onnx.py --model resnet18 --threads 2
"""
import argparse
import importlib.util
import json
import statistics
import time

import torch


def median_ms(fn, x, runs):
    with torch.inference_mode():
        for _ in range(10):
            fn(x)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def three_ways_ms(model, x, runs):
    """The median ms of `model` on `x` eager, as a frozen trace (jit) and
    through optimize_for_inference (ofi); also bench/zoo_bench.py's."""
    result = {"eager": median_ms(model, x, runs)}
    with torch.no_grad():
        frozen = torch.jit.freeze(torch.jit.trace(model, x))
    result["jit"] = median_ms(frozen, x, runs)
    with torch.no_grad():
        ofi = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, x)))
    result["ofi"] = median_ms(ofi, x, runs)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("export_onnx", args.export)
    export = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export)
    torch.set_num_threads(args.threads)
    model, example = export.build(args.model)
    model.eval()
    x = torch.randn(example.shape, generator=torch.Generator().manual_seed(1))
    result = {"torch": torch.__version__, "threads": args.threads}
    result.update(three_ways_ms(model, x, args.runs))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
