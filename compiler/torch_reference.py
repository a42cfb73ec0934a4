#!/usr/bin/python3
"""Reference outputs for the compiled-model tests: PyTorch (Debian's
python3-torch) running the same seeded torchvision model that
tuner_core/graph/export_onnx.py exported, on a seeded random input.

  /usr/bin/python3 compiler/torch_reference.py --export tuner_core/graph/export_onnx.py \
      --model mobilenet_v2 --input x.npy --expected y.npy
"""
import argparse
import importlib.util

import numpy
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", required=True, help="path of export_onnx.py")
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--expected", required=True)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("export_onnx", args.export)
    export = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export)
    torch.set_num_threads(1)
    model, example = export.build(args.model)  # the exporter's seed and weights
    model.eval()
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(example.shape, generator=generator)
    with torch.no_grad():
        y = model(x)
    numpy.save(args.input, x.numpy().astype(numpy.float32))
    numpy.save(args.expected, y.numpy().astype(numpy.float32))


if __name__ == "__main__":
    main()
