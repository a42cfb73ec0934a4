#!/usr/bin/env python3
"""The vendor libraries' figures for bench/gpu_bench.sh, through PyTorch on
the same GPU in the same run: cuBLAS (FP32 with TF32 off, TF32, FP16 with
FP32 accumulation) for the dense shapes and a BERT-base attention
batch_matmul, cuDNN for ResNet-18's 11 convolution layers (FP32 with TF32
off, and FP16; NCHW and channels-last, cudnn.benchmark picking the
algorithm; the faster layout is the reference), and ResNet-18 itself
(torchvision, weights=None, eval) at batch 1 and 16 as PyTorch runs it.

    bench/gpu_references.py --json OUT.json [--device 0] [--min_ms 20]

Each figure is the median of 5 timings with CUDA events, each timing a loop
of back-to-back launches at least --min_ms long (after warm-up), as AutoTVM's
time evaluator and gpu_bench.sh's measurements do. The shapes are the ones
gpu_bench.sh tunes (kept equal by hand: DENSE, BMM and CONVS below).
"""
import argparse
import json
import math
import statistics
import sys
import time

DENSE = [(4096, 4096, 4096), (1024, 1024, 1024), (16, 4096, 4096)]
BMM = (12, 128, 128, 64)  # batch, M, N, K: BERT-base's Q·Kᵀ per head at sequence 128
# (C, H, K, R, stride, padding) of ResNet-18's convolutions at 224x224, batch 1.
CONVS = [
    (3, 224, 64, 7, 2, 3), (64, 56, 64, 3, 1, 1), (64, 56, 128, 3, 2, 1),
    (128, 28, 128, 3, 1, 1), (64, 56, 128, 1, 2, 0), (128, 28, 256, 3, 2, 1),
    (256, 14, 256, 3, 1, 1), (128, 28, 256, 1, 2, 0), (256, 14, 512, 3, 2, 1),
    (512, 7, 512, 3, 1, 1), (256, 14, 512, 1, 2, 0),
]


def timer(torch, fn, min_ms):
    """Median seconds per call of fn over 5 timed loops of >= min_ms each."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    once_ms = max(start.elapsed_time(stop), 1e-3)
    number = max(1, math.ceil(min_ms / once_ms))
    samples = []
    for _ in range(5):
        start.record()
        for _ in range(number):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / 1e3 / number)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", required=True)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--min_ms", type=float, default=20.0)
    args = parser.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        sys.exit(f"gpu_references.py: no PyTorch here ({e})")
    if not torch.cuda.is_available():
        sys.exit("gpu_references.py: PyTorch sees no CUDA device")
    torch.cuda.set_device(args.device)
    dev = torch.device("cuda", args.device)
    torch.manual_seed(0)
    out = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name(dev),
           "dense": [], "batch_matmul": [], "conv": [], "resnet18": []}
    t0 = time.time()

    def precision(mode):
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        torch.backends.cudnn.allow_tf32 = mode == "tf32"

    # Dense as gpu_bench.sh tunes it: C = A·Bᵀ (layout NK), A M x K, B N x K.
    for m, n, k in DENSE:
        for mode, dtype in (("fp32", torch.float32), ("tf32", torch.float32),
                            ("fp16", torch.float16)):
            if mode != "fp32" and (m, n, k) != (4096, 4096, 4096):
                continue
            precision(mode)
            a = torch.randn(m, k, device=dev, dtype=dtype)
            b = torch.randn(n, k, device=dev, dtype=dtype)
            c = torch.empty(m, n, device=dev, dtype=dtype)
            s = timer(torch, lambda: torch.matmul(a, b.t(), out=c), args.min_ms)
            out["dense"].append({"M": m, "N": n, "K": k, "precision": mode, "seconds": s,
                                 "gflops": 2 * m * n * k / s / 1e9})
    bt, bm, bn, bk = BMM
    for mode, dtype in (("fp32", torch.float32), ("tf32", torch.float32), ("fp16", torch.float16)):
        precision(mode)
        a = torch.randn(bt, bm, bk, device=dev, dtype=dtype)
        b = torch.randn(bt, bn, bk, device=dev, dtype=dtype)
        s = timer(torch, lambda: torch.bmm(a, b.transpose(1, 2)), args.min_ms)
        out["batch_matmul"].append({"batch": bt, "M": bm, "N": bn, "K": bk, "precision": mode,
                                    "seconds": s, "gflops": 2 * bt * bm * bn * bk / s / 1e9})

    torch.backends.cudnn.benchmark = True
    for c_in, h, k_out, r, stride, pad in CONVS:
        oh = (h + 2 * pad - r) // stride + 1
        flops = 2 * k_out * oh * oh * c_in * r * r
        entry = {"C": c_in, "H": h, "W": h, "K": k_out, "R": r, "S": r, "stride": stride,
                 "padding": pad, "out_h": oh, "gflop": flops / 1e9}
        for mode, dtype in (("fp32", torch.float32), ("fp16", torch.float16)):
            precision(mode)
            best = None
            for layout in ("nchw", "nhwc"):
                fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
                x = torch.randn(1, c_in, h, h, device=dev, dtype=dtype).to(memory_format=fmt)
                w = torch.randn(k_out, c_in, r, r, device=dev, dtype=dtype).to(memory_format=fmt)
                s = timer(torch, lambda: F.conv2d(x, w, stride=stride, padding=pad), args.min_ms)
                entry[f"{mode}_{layout}_seconds"] = s
                if best is None or s < best[0]:
                    best = (s, layout)
            entry[f"{mode}_seconds"], entry[f"{mode}_layout"] = best
            entry[f"{mode}_gflops"] = flops / best[0] / 1e9
        out["conv"].append(entry)

    try:
        import torchvision
        precision("fp32")
        model = torchvision.models.resnet18(weights=None).eval().to(dev)
        for batch in (1, 16):
            for layout in ("nchw", "nhwc"):
                fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
                m = model.to(memory_format=fmt)
                x = torch.randn(batch, 3, 224, 224, device=dev).to(memory_format=fmt)
                with torch.inference_mode():
                    s = timer(torch, lambda: m(x), args.min_ms)
                out["resnet18"].append({"batch": batch, "layout": layout, "precision": "fp32",
                                        "seconds": s})
    except Exception as e:  # the layer figures stand without the model's
        out["resnet18_error"] = repr(e)
    out["wall_seconds"] = time.time() - t0
    with open(args.json, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    for d in out["dense"]:
        print(f"cuBLAS dense {d['M']}x{d['N']}x{d['K']} {d['precision']}: {d['gflops']:.0f} GFLOPS")
    for d in out["batch_matmul"]:
        print(f"cuBLAS bmm {d['batch']}x{d['M']}x{d['N']}x{d['K']} {d['precision']}: "
              f"{d['gflops']:.0f} GFLOPS")
    for c in out["conv"]:
        print(f"cuDNN conv C{c['C']} H{c['H']} K{c['K']} R{c['R']} s{c['stride']}: "
              f"fp32 {c['fp32_gflops']:.0f} GFLOPS ({c['fp32_layout']}), "
              f"fp16 {c['fp16_gflops']:.0f} GFLOPS ({c['fp16_layout']})")
    for r in out["resnet18"]:
        print(f"PyTorch ResNet-18 batch {r['batch']} {r['layout']}: {r['seconds'] * 1e3:.3f} ms")
    print(f"references: {out['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
