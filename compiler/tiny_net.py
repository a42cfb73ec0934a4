#!/usr/bin/python3
"""A tiny seeded CNN exported to ONNX for tests that run compiled models
slowly (qemu-aarch64) or often (the CLI test): 3x3 conv + BN + ReLU, a
depthwise 3x3 + BN + ReLU6 (Clip), a 1x1 conv + BN with a residual Add,
max pooling, global average pooling, flatten and a Gemm. Writes the model,
a seeded input and PyTorch's output on it (Debian's python3-torch):

  /usr/bin/python3 compiler/tiny_net.py --onnx tiny.onnx --input x.npy --expected y.npy
"""
import argparse

import numpy
import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False),
                                  nn.BatchNorm2d(16), nn.ReLU())
        self.depthwise = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False),
                                       nn.BatchNorm2d(16), nn.ReLU6())
        self.project = nn.Sequential(nn.Conv2d(16, 16, 1, bias=False), nn.BatchNorm2d(16))
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = self.stem(x)
        x = self.project(self.depthwise(x)) + x
        x = self.pool(torch.relu(x))
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.head(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--onnx", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--expected", required=True)
    args = parser.parse_args()
    torch.manual_seed(17)
    torch.set_num_threads(1)
    model = TinyNet()
    # Non-trivial BN statistics, so folding them into the weights is tested.
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.2, 0.2)
    model.eval()
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        y = model(x)
        torch.onnx.export(model, x, args.onnx, input_names=["input"], output_names=["output"],
                          opset_version=13)
    numpy.save(args.input, x.numpy().astype(numpy.float32))
    numpy.save(args.expected, y.numpy().astype(numpy.float32))


if __name__ == "__main__":
    main()
