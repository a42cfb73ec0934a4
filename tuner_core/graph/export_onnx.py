#!/usr/bin/python3
"""Exports the models TuneFleet's model-level tests and benchmarks use to ONNX.

Debian's python3-torch and python3-torchvision, weights=None after a fixed
seed (nothing is downloaded), batch 1, fp32, PyTorch's own exporter:

  /usr/bin/python3 tuner_core/graph/export_onnx.py --out DIR [--models resnet18,...]

Models: resnet18 and mobilenet_v2 (torchvision, 1x3x224x224), encoder (one
nn.TransformerEncoderLayer d_model=768, 12 heads, ff 3072, sequence 128,
input 1x128x768), concat_net (a small DenseNet block, Inception block and
CSP-style channel split, 1x3x64x64), se_net (two EfficientNet-style
squeeze-excite blocks, 1x3x64x64), window_attention (MaxViT/Swin-V2-style
attention over 4x4 windows of a 1x3x16x16 image: Einsum products, cosine
attention via F.normalize, a position bias from an MLP over a constant
table, a masked_fill mask, windows reshaped back into an image for a
convolution). --dynamic_batch marks the batch dimension symbolic.
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
    if name == "concat_net":
        return ConcatNet(), torch.randn(1, 3, 64, 64)
    if name == "se_net":
        return SqueezeExciteNet(), torch.randn(1, 3, 64, 64)
    if name == "window_attention":
        return WindowAttentionNet(), torch.randn(1, 3, 16, 16)
    raise SystemExit(f"unknown model {name!r} (resnet18, mobilenet_v2, encoder, concat_net, "
                     "se_net, window_attention)")


def randomize_batch_norms(model):
    """BatchNorm statistics other than the identity's."""
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)


class ConcatNet(torch.nn.Module):
    """A DenseNet block (each layer's BN-ReLU-conv features concatenated
    with all before), an Inception block (branches joined by a channel
    concat), a CSP-style channel split (one half through a convolution,
    joined again with the other) and a ConvNeXt-style channels-last detour
    (permute to NHWC, LayerNorm, Linear, permute back, residual), then a
    mean over H and W not kept (ShuffleNet's head), small: what
    concatenations, channel slices, permutes and that mean compile to is
    tested on it."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU())
        self.dense = nn.ModuleList(
            nn.Sequential(nn.BatchNorm2d(32 + 16 * i), nn.ReLU(), nn.Conv2d(32 + 16 * i, 32, 1),
                          nn.ReLU(), nn.Conv2d(32, 16, 3, 1, 1)) for i in range(3))
        self.branch1 = nn.Conv2d(80, 16, 1)
        self.branch3 = nn.Sequential(nn.Conv2d(80, 16, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 1, 1))
        self.branch_pool = nn.Sequential(nn.MaxPool2d(3, 1, 1), nn.Conv2d(80, 16, 1))
        self.csp = nn.Sequential(nn.Conv2d(32, 32, 1), nn.ReLU())
        self.norm = nn.LayerNorm(64)
        self.mix = nn.Linear(64, 64)
        self.head = nn.Linear(64, 10)
        randomize_batch_norms(self)

    def forward(self, x):
        features = [self.stem(x)]
        for layer in self.dense:
            features.append(layer(torch.cat(features, 1)))
        x = torch.cat(features, 1)
        x = torch.cat([self.branch1(x), self.branch3(x), self.branch_pool(x)], 1)
        kept, through = x.chunk(2, 1)
        x = torch.cat([kept, self.csp(through)], 1)
        x = x + self.mix(self.norm(x.permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
        return self.head(x.mean([2, 3]))


class SqueezeExciteBlock(torch.nn.Module):
    """EfficientNet's: a depthwise convolution with SiLU, a squeeze-excite
    scale (global average pool, 1x1 convolutions with SiLU and sigmoid, the
    channel Mul as torchvision writes it: scale * input) and a 1x1
    projection."""

    def __init__(self, channels, out):
        super().__init__()
        nn = torch.nn
        self.depthwise = nn.Sequential(nn.Conv2d(channels, channels, 3, 1, 1, groups=channels),
                                       nn.BatchNorm2d(channels), nn.SiLU())
        self.squeeze = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(channels, channels // 4, 1),
                                     nn.SiLU(), nn.Conv2d(channels // 4, channels, 1), nn.Sigmoid())
        self.project = nn.Sequential(nn.Conv2d(channels, out, 1), nn.BatchNorm2d(out))

    def forward(self, x):
        x = self.depthwise(x)
        return self.project(self.squeeze(x) * x)


class SqueezeExciteNet(torch.nn.Module):
    """Two squeeze-excite blocks: one at 32x32, whose scale folds into its
    projection's weights (fewer floats than the activation), one at 4x4,
    whose scale stays a pass over the activation (more)."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 96, 3, 2, 1), nn.BatchNorm2d(96), nn.SiLU())
        self.block1 = SqueezeExciteBlock(96, 24)
        self.down = nn.Sequential(nn.Conv2d(24, 64, 3, 8, 1), nn.SiLU())
        self.block2 = SqueezeExciteBlock(64, 128)
        self.head = nn.Linear(128, 10)
        randomize_batch_norms(self)

    def forward(self, x):
        x = self.block2(self.down(self.block1(self.stem(x))))
        return self.head(x.mean([2, 3]))


class WindowAttentionNet(torch.nn.Module):
    """Attention within 4x4 windows of a 32-channel 8x8 map, as MaxViT and
    Swin-V2 write it, between two convolutions."""

    def __init__(self, channels=32, heads=2, window=4):
        super().__init__()
        self.heads, self.window = heads, window
        self.stem = torch.nn.Conv2d(3, channels, 3, stride=2, padding=1)
        self.qkv = torch.nn.Linear(channels, 3 * channels)
        self.proj = torch.nn.Linear(channels, channels)
        self.logit_scale = torch.nn.Parameter(torch.log(10 * torch.ones(heads, 1, 1)))
        self.bias_mlp = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.ReLU(),
                                            torch.nn.Linear(64, heads))
        steps = torch.arange(window * window, dtype=torch.float32)
        table = torch.stack([steps // window, steps % window], dim=-1) / window
        self.register_buffer("table", table)  # [P, 2]
        causal = torch.tril(torch.ones(window * window, window * window))
        self.register_buffer("mask", causal.view(1, 1, window * window, window * window))
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1)
        self.head = torch.nn.Linear(channels, 10)

    def forward(self, x):
        x = self.stem(x)
        b, c, h, w = x.shape
        p = self.window
        # [B, C, H, W] -> windows [B, G, P, C]
        t = x.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
        t = t.reshape(b, (h // p) * (w // p), p * p, c)
        q, k, v = self.qkv(t).chunk(3, dim=-1)
        split = lambda u: u.reshape(b, -1, p * p, self.heads, c // self.heads).transpose(2, 3)
        q, k, v = split(q), split(k), split(v)  # [B, G, H, P, D]
        q = torch.nn.functional.normalize(q, dim=-1)
        k = torch.nn.functional.normalize(k, dim=-1)
        scores = torch.einsum("bghid,bghjd->bghij", q, k)
        scores = scores * torch.clamp(self.logit_scale, max=4.6).exp()
        bias = 16 * torch.sigmoid(self.bias_mlp(self.table))  # [P, heads]
        scores = scores + bias.permute(1, 0).unsqueeze(-1)
        scores = scores.masked_fill(self.mask == 0, float("-inf"))
        out = torch.einsum("bghij,bghjd->bghid", scores.softmax(dim=-1), v)
        out = self.proj(out.transpose(2, 3).reshape(b, -1, p * p, c))
        # windows -> [B, C, H, W]
        out = out.view(b, h // p, w // p, p, p, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, h, w)
        x = torch.relu(self.conv(out + x))
        return self.head(x.mean([2, 3]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default="resnet18,mobilenet_v2,encoder,concat_net,se_net,window_attention")
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
