#!/usr/bin/python3
"""Builds "the zoo users run" and exports each model to ONNX.

Debian's python3-torch (1.13) and python3-torchvision (0.14): weights=None
after torch.manual_seed(--seed) (nothing is downloaded), eval(), fp32,
PyTorch's own exporter with do_constant_folding=True, one input named "input"
and one output named "output". Always run it with /usr/bin/python3.

The zoo:
  * every ImageNet classification builder of torchvision.models (resnet*,
    resnext*, wide_resnet*, regnet_*, mobilenet_v2/v3_*, mnasnet*,
    efficientnet_b*/v2_*, shufflenet_v2_*, squeezenet*, densenet*, googlenet,
    inception_v3, vgg*, alexnet, convnext_*, vit_*, swin_*, maxvit_t), input
    Bx3x224x224 (inception_v3: Bx3x299x299; --image_size changes it for the
    convolutional families, "native" takes each model's ImageNet eval crop).
    torchvision zero-initializes vit_*'s classifier head, which makes every
    output 0: here it is drawn from the seed like the other weights, and so
    is every tensor torchvision initializes to one constant (biases, batch
    norms' scales and statistics, layer scales: draw_constant_init);
  * bert_tiny_ids: a BERT-like encoder (token + position embeddings, LayerNorm,
    4 x nn.TransformerEncoderLayer d=256, 4 heads, ff 1024, GELU), input the
    int64 token ids Bx128; the token and position embeddings are Gathers
    (of the input ids, and of the constant positions 0..127);
  * bert_tiny: the same weights, input the float32 token embeddings Bx128x256
    (what bert_tiny_ids' token Gather produces), the position embedding table
    added as a constant: no Gather, for runtimes that take float32 inputs
    only.  bert_tiny(tok_emb[ids]) == bert_tiny_ids(ids).
  * transformer encoders as other code writes them (family "encoder"), input
    float32 token embeddings: gpt2_causal (GPT-2 blocks, 3 x d=192, 6 heads,
    77 tokens, a causal masked_fill, tanh GELU), distilbert_masked
    (DistilBERT-style: shapes from x.size(), a padding mask by masked_fill,
    2 x d=256, 100 tokens), encoder_prenorm_relu (nn.TransformerEncoder,
    norm_first, ReLU, 2 x d=384, 64 tokens) and encoder_causal_seqfirst
    (sequence-first, an additive causal mask, 2 x d=128, 50 tokens).
  * torchvision's semantic segmentation models (family "segmentation":
    deeplabv3_mobilenet_v3_large, deeplabv3_resnet50, fcn_resnet50,
    lraspp_mobilenet_v3_large; weights=None, weights_backbone=None), their
    "out" map [B, 21, H, W], input float32 Bx3x224x224.

Usage:
  /usr/bin/python3 tuner_core/graph/zoo_models.py --list [--family vit,swin]
  /usr/bin/python3 tuner_core/graph/zoo_models.py --out DIR
        # the representative benchmark subset (one or two small models per family)
  /usr/bin/python3 tuner_core/graph/zoo_models.py --out DIR --models 'resnet*,bert_tiny'
  /usr/bin/python3 tuner_core/graph/zoo_models.py --out DIR --all --opset 17 --batch 4
  /usr/bin/python3 tuner_core/graph/zoo_models.py --out DIR --reference
        # also DIR/<name>_input.npy (seeded input) and DIR/<name>_expected.npy
        # (PyTorch's output on it) for correctness checks

Models over protobuf's 2 GB limit (vit_h_14, regnet_y_128gf) are written as
DIR/<name>.onnx with their weights in DIR/<name>.onnx.data. swin_v2_* need a
symbolic for aten::zero (Tensor.zero_), which PyTorch 1.13 lacks: this module
registers one (zeros via ConstantOfShape, folded away).

Selection: --models takes names or shell patterns (fnmatch), --family family
names (see --list), --all every model; none of them: the representative
subset. They combine as a union. Each model is exported on its own; a model
that fails to export is reported (exit status 1) and the others still are.
"""
import argparse
import fnmatch
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
import types
from dataclasses import dataclass

import numpy as np
import onnx
import torch
import torchvision

# (name prefix, family), first match wins.
_FAMILIES = (
    ("resnext", "resnext"),
    ("resnet", "resnet"),
    ("wide_resnet", "wide_resnet"),
    ("regnet_", "regnet"),
    ("mobilenet_v2", "mobilenet_v2"),
    ("mobilenet_v3", "mobilenet_v3"),
    ("mnasnet", "mnasnet"),
    ("efficientnet_v2", "efficientnet_v2"),
    ("efficientnet_b", "efficientnet"),
    ("shufflenet", "shufflenet"),
    ("squeezenet", "squeezenet"),
    ("densenet", "densenet"),
    ("googlenet", "googlenet"),
    ("inception", "inception"),
    ("vgg", "vgg"),
    ("alexnet", "alexnet"),
    ("convnext", "convnext"),
    ("vit_", "vit"),
    ("swin_v2", "swin_v2"),
    ("swin_", "swin"),
    ("maxvit", "maxvit"),
    ("bert", "bert"),
    ("deeplabv3_", "segmentation"),
    ("fcn_", "segmentation"),
    ("lraspp_", "segmentation"),
    ("gpt2_", "encoder"),
    ("distilbert_", "encoder"),
    ("encoder_", "encoder"),
)

# One or two small models per family, for benchmarks.
REPRESENTATIVE = (
    "resnet18", "resnet50", "resnext50_32x4d", "regnet_y_400mf", "mobilenet_v2",
    "mobilenet_v3_large", "mnasnet1_0", "efficientnet_b0", "shufflenet_v2_x1_0",
    "squeezenet1_1", "densenet121", "googlenet", "inception_v3", "vgg11", "alexnet",
    "convnext_tiny", "vit_b_16", "swin_t", "bert_tiny", "bert_tiny_ids",
)

# Families whose architecture fixes the input resolution (positional
# embeddings, window partitions): --image_size does not apply to them.
_FIXED_SIZE_FAMILIES = ("vit", "swin", "swin_v2", "maxvit")

# BERT-like encoder.
BERT_VOCAB = 30522
BERT_SEQ = 128
BERT_DIM = 256
BERT_HEADS = 4
BERT_FF = 1024
BERT_LAYERS = 4


def family_of(name: str) -> str:
    for prefix, family in _FAMILIES:
        if name.startswith(prefix):
            return family
    return name


def classification_models() -> list[str]:
    """The ImageNet classification builders of torchvision.models, sorted."""
    models = torchvision.models
    if hasattr(models, "list_models"):
        # Registered builders of the top-level module only: no detection,
        # segmentation, video, optical_flow or quantization models.
        return sorted(models.list_models(module=models))
    # Older torchvision: scan the namespace for the known families' builders.
    names = []
    for name in dir(models):
        if not isinstance(getattr(models, name), types.FunctionType):
            continue  # classes, weight enums, submodules
        if name.startswith(tuple(p for p, f in _FAMILIES if f != "bert")):
            names.append(name)
    return sorted(names)


# torchvision's semantic segmentation models (torchvision.models.segmentation,
# family "segmentation"): atrous (dilated) backbones and pyramids, bilinear
# upsampling back to the input's size; the output is their "out" map
# [B, 21, H, W].
SEGMENTATION = ("deeplabv3_mobilenet_v3_large", "deeplabv3_resnet50", "fcn_resnet50",
                "lraspp_mobilenet_v3_large")


class SegmentationOut(torch.nn.Module):
    """A segmentation model's "out" map (its forward returns a dict)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)["out"]


def all_models() -> list[str]:
    return (classification_models() + ["bert_tiny", "bert_tiny_ids"] + sorted(ENCODERS) +
            list(SEGMENTATION))


class BertEncoder(torch.nn.Module):
    """A BERT-like encoder: embeddings, LayerNorm, post-norm GELU layers.

    ids=True: input int64 token ids [B, S]; ids=False: input float32 token
    embeddings [B, S, D]. Both build the same parameters from the same seed.
    """

    def __init__(self, ids: bool, vocab: int = BERT_VOCAB, seq: int = BERT_SEQ,
                 dim: int = BERT_DIM, heads: int = BERT_HEADS, ff: int = BERT_FF,
                 layers: int = BERT_LAYERS):
        super().__init__()
        self.ids = ids
        self.token_embedding = torch.nn.Embedding(vocab, dim)
        self.position_embedding = torch.nn.Embedding(seq, dim)
        self.register_buffer("positions", torch.arange(seq).unsqueeze(0), persistent=False)
        self.norm = torch.nn.LayerNorm(dim, eps=1e-12)
        layer = torch.nn.TransformerEncoderLayer(
            d_model=dim, nhead=heads, dim_feedforward=ff, dropout=0.0, activation="gelu",
            layer_norm_eps=1e-12, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The sequence length is fixed (BERT_SEQ), so the positions are the
        # constant 0..S-1. (Slicing them by x.shape[1], as HuggingFace's BERT
        # does, adds a Shape -> Gather -> Slice chain in front.)
        if self.ids:
            # As BERT exports: two Gathers, the token embedding's of the
            # input ids and the position embedding's of constant positions
            # (PyTorch's constant folding leaves the latter in place).
            x = self.token_embedding(x) + self.position_embedding(self.positions)
        else:
            # The same values with no Gather: row i of the table is position
            # i's embedding, added as a constant [1, S, D] tensor.
            x = x + self.position_embedding.weight.unsqueeze(0)
        return self.encoder(self.norm(x))


class Gpt2Block(torch.nn.Module):
    """A GPT-2 block as nanoGPT writes it: one qkv Linear split three ways,
    a causal mask applied by masked_fill, tanh-approximated GELU."""

    def __init__(self, dim: int, heads: int, seq: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv, self.proj = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
        self.fc, self.out = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)
        self.act = torch.nn.GELU(approximate="tanh")
        self.register_buffer("bias", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (u.view(b, t, self.heads, c // self.heads).transpose(1, 2) for u in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = torch.softmax(att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, c))
        return x + self.out(self.act(self.fc(self.ln2(x))))


class DistilBertLayer(torch.nn.Module):
    """DistilBERT's layer: head shapes from x.size(), the padding mask by
    masked_fill with the dtype's minimum, post-norm, Erf GELU."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q, self.k = torch.nn.Linear(dim, dim), torch.nn.Linear(dim, dim)
        self.v, self.o = torch.nn.Linear(dim, dim), torch.nn.Linear(dim, dim)
        self.ff1, self.ff2 = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)
        self.ln1 = torch.nn.LayerNorm(dim, eps=1e-12)
        self.ln2 = torch.nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        bs, q_len, dim = x.size()
        dh = dim // self.heads

        def shape(t):
            return t.view(bs, -1, self.heads, dh).transpose(1, 2)

        q = shape(self.q(x)) / math.sqrt(dh)
        scores = torch.matmul(q, shape(self.k(x)).transpose(2, 3))
        scores = scores.masked_fill((mask == 0).view(bs, 1, 1, q_len),
                                    torch.finfo(scores.dtype).min)
        ctx = torch.matmul(torch.softmax(scores, dim=-1), shape(self.v(x)))
        x = self.ln1(x + self.o(ctx.transpose(1, 2).contiguous().view(bs, -1, self.heads * dh)))
        return self.ln2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


class EncoderStack(torch.nn.Module):
    """Layers applied in turn, each given the constant mask when it takes one."""

    def __init__(self, layers: list, mask: torch.Tensor | None = None):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)
        if mask is not None:
            self.register_buffer("mask", mask)
        self.has_mask = mask is not None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, self.mask) if self.has_mask else layer(x)
        return x


def _distilbert() -> torch.nn.Module:
    mask = torch.ones(1, 100)
    mask[0, 87:] = 0  # the last 13 tokens are padding
    return EncoderStack([DistilBertLayer(256, 8) for _ in range(2)], mask)


def _prenorm_relu() -> torch.nn.Module:
    layer = torch.nn.TransformerEncoderLayer(d_model=384, nhead=6, dim_feedforward=1536,
                                             dropout=0.0, activation="relu", batch_first=True,
                                             norm_first=True)
    return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


class CausalSeqFirst(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512,
                                                 dropout=0.0)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(50))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x, mask=self.mask)


# Encoders as other code writes them: builder and input shape.
ENCODERS = {
    "gpt2_causal": (lambda: torch.nn.Sequential(*[Gpt2Block(192, 6, 77) for _ in range(3)],
                                                torch.nn.LayerNorm(192)), (77, 192)),
    "distilbert_masked": (_distilbert, (100, 256)),
    "encoder_prenorm_relu": (_prenorm_relu, (64, 384)),
    "encoder_causal_seqfirst": (CausalSeqFirst, (50, 128)),
}


@dataclass
class Built:
    model: torch.nn.Module
    example: torch.Tensor


def native_image_size(name: str) -> int:
    """The ImageNet eval crop of the model's default weights (metadata only)."""
    weights = torchvision.models.get_model_weights(name).DEFAULT
    return int(weights.transforms().crop_size[0])


def image_size_for(name: str, image_size: str | None) -> int:
    default = 299 if name == "inception_v3" else 224
    if image_size is None or family_of(name) in _FIXED_SIZE_FAMILIES:
        return default
    if image_size == "native":
        return native_image_size(name)
    return int(image_size)


def build(name: str, batch: int = 1, seed: int = 0, image_size: str | None = None) -> Built:
    """The model in eval mode (weights from torch.manual_seed(seed)) and a
    seeded example input of batch `batch`."""
    torch.manual_seed(seed)
    inputs = torch.Generator().manual_seed(seed + 1)
    if name in ("bert_tiny", "bert_tiny_ids"):
        model = BertEncoder(ids=name == "bert_tiny_ids")
        if model.ids:
            example = torch.randint(0, BERT_VOCAB, (batch, BERT_SEQ), generator=inputs)
        else:
            example = torch.randn(batch, BERT_SEQ, BERT_DIM, generator=inputs)
        return Built(model.eval(), example)
    if name in ENCODERS:
        make, (seq, dim) = ENCODERS[name]
        shape = (seq, batch, dim) if name == "encoder_causal_seqfirst" else (batch, seq, dim)
        model = make()
        draw_constant_init(model, seed)
        return Built(model.eval(), torch.randn(*shape, generator=inputs))
    if name in SEGMENTATION:
        model = SegmentationOut(getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None))
        draw_constant_init(model, seed)
        size = image_size_for(name, image_size)
        return Built(model.eval(), torch.randn(batch, 3, size, size, generator=inputs))
    if name not in classification_models():
        raise KeyError(f"unknown model {name!r} (--list lists them)")
    kwargs: dict = {"weights": None}
    if name in ("inception_v3", "googlenet"):
        # No auxiliary classifier (eval ignores it anyway); init_weights
        # explicitly, which silences the builders' warning.
        kwargs.update(aux_logits=False, init_weights=True)
    model = getattr(torchvision.models, name)(**kwargs)
    if isinstance(model, torchvision.models.VisionTransformer):
        # torchvision zero-initializes ViT's classifier head: with weights=None
        # every output is 0 and a reference check proves nothing. Draw the
        # head's weight (same seed, same graph) as timm does instead.
        torch.nn.init.trunc_normal_(model.heads.head.weight, std=0.02)
    draw_constant_init(model, seed)
    size = image_size_for(name, image_size)
    example = torch.randn(batch, 3, size, size, generator=inputs)
    return Built(model.eval(), example)


def draw_constant_init(model: torch.nn.Module, seed: int) -> None:
    """Draws from the seed the float parameters and buffers torchvision
    initializes to one constant (biases at 0, batch norms' scale and
    statistics at 1 and 0, ConvNeXt's layer scale at 1e-6), as a trained
    model has them: with those constants a reference check cannot see a
    bias applied to the wrong channel or a batch norm's statistics swapped."""
    generator = torch.Generator().manual_seed(seed + 2)
    with torch.no_grad():
        for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
            if not tensor.is_floating_point() or tensor.numel() < 2:
                continue
            first = tensor.flatten()[0].item()
            if not bool((tensor == first).all()):
                continue
            noise = torch.rand(tensor.shape, generator=generator)
            if "layer_scale" in name:
                tensor.copy_(0.1 + 0.4 * noise)
            elif first == 0:
                tensor.copy_(0.2 * noise - 0.1)
            else:
                tensor.copy_(first * (0.5 + noise))


def export(name: str, out: str, opset: int = 14, batch: int = 1, seed: int = 0,
           reference: bool = False, dynamic_batch: bool = False,
           image_size: str | None = None) -> str:
    """Writes out/<name>.onnx (and with reference, out/<name>_input.npy and
    out/<name>_expected.npy); returns the .onnx path."""
    built = build(name, batch=batch, seed=seed, image_size=image_size)
    path = os.path.join(out, name + ".onnx")
    dynamic = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None
    # No torch.no_grad(): with gradients off, nn.TransformerEncoderLayer and
    # nn.MultiheadAttention take their fused fast paths
    # (aten::_transformer_encoder_layer_fwd, aten::_native_multi_head_attention),
    # which the exporter cannot write. The computed values are the same.
    if reference:
        expected = built.model(built.example)
        if not isinstance(expected, torch.Tensor):
            raise TypeError(f"{name}: output is {type(expected).__name__}, not a tensor")
        # float32 images or embeddings, int64 token ids (bert_tiny_ids).
        np.save(os.path.join(out, name + "_input.npy"), built.example.numpy())
        np.save(os.path.join(out, name + "_expected.npy"),
                expected.detach().numpy().astype(np.float32))
    _register_missing_symbolics(opset)
    # Models over protobuf's 2 GB limit (vit_h_14, regnet_y_128gf) come out of
    # the exporter as <name>.onnx plus one file per weight, named after the
    # weight, next to it: export into a scratch folder, then keep the .onnx
    # alone or with all its weights in one file, <name>.onnx.data.
    with tempfile.TemporaryDirectory(dir=out, prefix=f".{name}.") as scratch:
        scratch_path = os.path.join(scratch, name + ".onnx")
        torch.onnx.export(built.model, built.example, scratch_path, input_names=["input"],
                          output_names=["output"], opset_version=opset,
                          do_constant_folding=True, dynamic_axes=dynamic)
        data_path = path + ".data"
        if os.path.exists(data_path):
            os.remove(data_path)
        if os.listdir(scratch) == [name + ".onnx"]:
            shutil.move(scratch_path, path)
        else:
            proto = onnx.load(scratch_path)  # reads the weights from scratch
            onnx.save_model(proto, path, save_as_external_data=True,
                            all_tensors_to_one_file=True,
                            location=os.path.basename(data_path), size_threshold=1024)
    return path


def _zero_symbolic(g, self):
    # aten::zero is Tensor.zero_() after the exporter's in-place-op removal;
    # swin_v2's attention zeroes the key third of its qkv bias with it, and
    # PyTorch 1.13 has no symbolic for it. Zeros of self's shape (float32, the
    # only type it meets here); constant folding folds them into the bias.
    return g.op("ConstantOfShape", g.op("Shape", self),
                value_t=torch.tensor([0.0], dtype=torch.float32))


def _register_missing_symbolics(opset: int) -> None:
    torch.onnx.register_custom_op_symbolic("aten::zero", _zero_symbolic, opset)


def select(models: str | None, families: str | None, everything: bool) -> list[str]:
    available = all_models()
    if everything:
        return available
    if not models and not families:
        return [n for n in REPRESENTATIVE if n in available]
    chosen: list[str] = []
    unknown: list[str] = []
    for pattern in filter(None, (models or "").split(",")):
        hits = fnmatch.filter(available, pattern)
        if not hits:
            unknown.append(pattern)
        chosen += hits
    wanted = set(filter(None, (families or "").split(",")))
    known_families = {family_of(n) for n in available}
    unknown += [f"family {f}" for f in sorted(wanted - known_families)]
    chosen += [n for n in available if family_of(n) in wanted]
    if unknown:
        raise SystemExit(f"no such model: {', '.join(unknown)} (--list lists them)")
    return list(dict.fromkeys(chosen))


def input_description(name: str, batch: int, image_size: str | None) -> str:
    if name == "bert_tiny_ids":
        return f"int64 {batch}x{BERT_SEQ}"
    if name == "bert_tiny":
        return f"float32 {batch}x{BERT_SEQ}x{BERT_DIM}"
    if name in ENCODERS:
        seq, dim = ENCODERS[name][1]
        dims = (seq, batch, dim) if name == "encoder_causal_seqfirst" else (batch, seq, dim)
        return "float32 " + "x".join(str(d) for d in dims)
    try:
        size = image_size_for(name, image_size)
    except (KeyError, ValueError, AttributeError):
        size = "?"
    return f"float32 {batch}x3x{size}x{size}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--list", action="store_true",
                        help="print the selected models (name, family, input) and exit; "
                             "'*' marks the representative subset")
    parser.add_argument("--out", help="write DIR/<name>.onnx")
    parser.add_argument("--models", help="comma-separated names or fnmatch patterns")
    parser.add_argument("--family", help="comma-separated families (resnet, vit, bert, ...)")
    parser.add_argument("--all", action="store_true", help="every model of the zoo")
    parser.add_argument("--opset", type=int, default=14, choices=(13, 14, 15, 16, 17))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--dynamic_batch", action="store_true",
                        help="mark the batch dimension symbolic")
    parser.add_argument("--image_size", default=None,
                        help="convolutional models' input side (int, or 'native': each "
                             "model's ImageNet eval crop); default 224, inception_v3 299")
    parser.add_argument("--seed", type=int, default=0,
                        help="torch.manual_seed before building; the input uses seed+1")
    parser.add_argument("--reference", action="store_true",
                        help="also write DIR/<name>_input.npy and DIR/<name>_expected.npy")
    args = parser.parse_args(argv)

    names = select(args.models, args.family, args.all or (args.list and not args.models
                                                          and not args.family))
    if args.list:
        for name in names:
            mark = "*" if name in REPRESENTATIVE else " "
            print(f"{mark} {name:22s} {family_of(name):16s} "
                  f"{input_description(name, args.batch, args.image_size)}")
        return 0
    if not args.out:
        parser.error("--out is required (or --list)")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

    failed: list[tuple[str, str]] = []
    for name in names:
        start = time.monotonic()
        try:
            path = export(name, args.out, opset=args.opset, batch=args.batch, seed=args.seed,
                          reference=args.reference, dynamic_batch=args.dynamic_batch,
                          image_size=args.image_size)
        except Exception as error:  # pylint: disable=broad-except
            message = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
            failed.append((name, message))
            print(f"FAILED {name}: {message}", file=sys.stderr)
            if os.environ.get("ZOO_TRACEBACK"):
                traceback.print_exc()
            continue
        print(f"{path}  ({time.monotonic() - start:.1f} s)", flush=True)
    if failed:
        print(f"{len(failed)} of {len(names)} models failed to export:", file=sys.stderr)
        for name, message in failed:
            print(f"  {name}: {message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
