#!/usr/bin/python3
"""Exports the models TuneFleet's model-level tests and benchmarks use to ONNX.

Debian's python3-torch and python3-torchvision, weights=None after a fixed
seed (nothing is downloaded), batch 1, fp32, PyTorch's own exporter:

  /usr/bin/python3 tuner_core/graph/export_onnx.py --out DIR [--models resnet18,...]

Models: resnet18 and mobilenet_v2 (torchvision, 1x3x224x224), encoder (one
nn.TransformerEncoderLayer d_model=768, 12 heads, ff 3072, sequence 128,
input 1x128x768). --dynamic_batch marks the batch dimension symbolic.
"""
import argparse
import os

import torch
import torchvision


def build(name):
    torch.manual_seed(0)
    if name == "resnet18":
        return torchvision.models.resnet18(weights=None), torch.randn(1, 3, 224, 224)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None), torch.randn(1, 3, 224, 224)
    if name == "encoder":
        layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                                 dropout=0.0, batch_first=True)
        return layer, torch.randn(1, 128, 768)
    raise SystemExit(f"unknown model {name!r} (resnet18, mobilenet_v2, encoder)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default="resnet18,mobilenet_v2,encoder")
    parser.add_argument("--dynamic_batch", action="store_true")
    parser.add_argument("--opset", type=int, default=13)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name in args.models.split(","):
        model, example = build(name)
        model.eval()
        path = os.path.join(args.out, name + ".onnx")
        dynamic = {"input": {0: "batch"}, "output": {0: "batch"}} if args.dynamic_batch else None
        # No torch.no_grad(): with gradients off, nn.TransformerEncoderLayer
        # takes its fused fast path (aten::_transformer_encoder_layer_fwd),
        # which the exporter cannot write. The graph is the same otherwise.
        torch.onnx.export(model, example, path, input_names=["input"],
                          output_names=["output"], opset_version=args.opset,
                          do_constant_folding=True, dynamic_axes=dynamic)
        print(path)


if __name__ == "__main__":
    main()
