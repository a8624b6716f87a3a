#!/usr/bin/python3
"""Two SGD steps from an ONNX file's initializers: layerplan against PyTorch
(docs/BENCHMARKS.md, "ONNX import").

A torchvision model is exported for training (TrainingMode.TRAINING,
do_constant_folding=False) at a small fixed image size (larger where the model needs it:
SMALLEST_SIZE) with a symbolic batch; its initializers, read back with the onnx package,
are the starting weights of PyTorch in float64 (the yardstick) and float32, and of
`layerplan train --init-from FILE.onnx`, all on the same images and labels (a safetensors
dataset, in layerplan's batch order with --shuffle off). After the steps, every parameter
and running statistic of layerplan's checkpoint is compared with PyTorch's float64 result,
as PyTorch's own float32 run is: the float32 spread, not a fixed tolerance, is the
yardstick (batch norm on small batches amplifies rounding). Dropout draws other masks than
PyTorch, so every Dropout module's probability is set to 0 before the export (the file
then says ratio 0, which layerplan reads); EfficientNet's stochastic depth, which PyTorch
1.13 cannot export in training mode, is built with probability 0 (torchvision then skips
it).

--model mobile_block is not torchvision's: a net of MobileNet v3's and EfficientNet's
operators without depthwise convolution (mobile_block below), to check the activations,
the squeeze-and-excitation Mul and batch norm's eps and momentum as PyTorch exports them.

Needs python3-torch, python3-torchvision and python3-onnx (Debian; not in CI):
  /usr/bin/python3 bench/onnx_sgd_vs_pytorch.py [--layerplan build/layerplan] [--model resnet18]
      [--size 64] [--batch 4] [--steps 2] [--kernels onednn] [--keep-dropout] [--bn-eps 1e-5]
      [--float32-variants] [--seed 1]

--keep-dropout exports Dropout as the model has it (and then the two runs draw other masks);
--bn-eps sets every batch norm's epsilon before the export (the file then says it).
--float32-variants also runs PyTorch float32 two other ways (FLOAT32_VARIANTS), to show how
far float32 runs that differ only in rounding order spread around float64.
"""
import argparse
import collections
import copy
import json
import os
import struct
import subprocess
import tempfile
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torchvision


def write_dataset(path, images, labels):
    """A safetensors file with images (F32) and labels (I64)."""
    tensors = {"images": ("F32", images.numpy().astype("<f4")), "labels": ("I64", labels.numpy().astype("<i8"))}
    header, offset, blobs = {}, 0, []
    for name, (dtype, array) in tensors.items():
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    data = open(path, "rb").read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + size + lo:8 + size + hi], dtype="<f4").reshape(info["shape"])
    return out


def build_model(name, keep_dropout):
    """torchvision's model as the export needs it: no auxiliary heads, stochastic depth off,
    and (unless keep_dropout) every Dropout's probability 0."""
    kwargs = {"aux_logits": False, "init_weights": False} if name in ("inception_v3", "googlenet") else {}
    if name.startswith("efficientnet"):
        kwargs["stochastic_depth_prob"] = 0.0
    model = getattr(torchvision.models, name)(**kwargs)
    if not keep_dropout:
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
    return model


class MobileBlock(torch.nn.Module):
    """conv, BatchNorm2d(eps=1e-3, momentum=0.01), Hardswish; a squeeze-and-excitation block
    with a Hardsigmoid scale (torchvision.ops.SqueezeExcitation, as MobileNet v3's); ReLU6;
    conv, SiLU (exported as Mul(x, Sigmoid(x))); a sigmoid gate; pooling and a classifier."""

    def __init__(self, classes=1000):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16, 1e-3, 0.01),
                                  nn.Hardswish())
        self.se = torchvision.ops.SqueezeExcitation(16, 8, scale_activation=nn.Hardsigmoid)
        self.relu6 = nn.ReLU6()
        self.conv = nn.Conv2d(16, 16, 3, padding=1)
        self.silu = nn.SiLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.relu6(self.se(self.stem(x)))
        y = self.conv(x)
        x = self.silu(y) * torch.sigmoid(y)
        return self.fc(torch.flatten(self.pool(x), 1))


# PyTorch's float32 run computed other ways (--float32-variants): the same function, rounded
# in other orders. "native" turns oneDNN (mkldnn) off, so convolutions run PyTorch's own
# loops; "channels_last" stores activations NHWC, which picks other oneDNN kernels.
FLOAT32_VARIANTS = ("native", "channels_last")


def torch_steps(model, state, dtype, images, labels, batch, steps, lr, momentum, variant="default"):
    model = copy.deepcopy(model).to(dtype)
    converted = collections.OrderedDict((k, v.to(dtype)) for k, v in state.items())
    # The modules' own state-dict versions: MNASNet refuses a state without one.
    converted._metadata = model.state_dict()._metadata
    model.load_state_dict(converted, strict=False)
    if variant == "channels_last":
        model = model.to(memory_format=torch.channels_last)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    lanes = images.shape[0] // batch
    for k in range(steps):
        x, y = images[k::lanes][:batch].to(dtype), labels[k::lanes][:batch]
        if variant == "channels_last":
            x = x.contiguous(memory_format=torch.channels_last)
        opt.zero_grad()
        with torch.backends.mkldnn.flags(enabled=variant != "native"):
            torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return {k: v.detach().to(torch.float64).numpy() for k, v in model.state_dict().items()}


# The smallest image size a model exports at, where it is larger than --size: Inception-v3's
# stem needs 75 pixels; AlexNet's and VGG-16's adaptive average pools export only where they
# pool nothing (a 6x6 or 7x7 map in, as at 224x224).
SMALLEST_SIZE = {"inception_v3": 80, "alexnet": 224, "vgg16": 224}

# Small nets of layer kinds the torchvision models do not cover, by --model name: a factory
# and the class count (bench/onnx_layer_kinds.py fills it and calls main()).
CUSTOM_MODELS = {"mobile_block": (MobileBlock, 1000)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layerplan", default="build/layerplan")
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--kernels", default="onednn")
    ap.add_argument("--keep-dropout", action="store_true", help="export Dropout as the model has it")
    ap.add_argument("--bn-eps", type=float, help="set every batch norm's epsilon before the export")
    ap.add_argument("--float32-variants", action="store_true",
                    help="also run PyTorch float32 without oneDNN and channels-last (FLOAT32_VARIANTS)")
    ap.add_argument("--seed", type=int, default=1, help="torch.manual_seed: the weights, images and labels")
    args = ap.parse_args()
    args.size = max(args.size, SMALLEST_SIZE.get(args.model, 0))
    warnings.filterwarnings("ignore")
    torch.manual_seed(args.seed)
    if args.model in CUSTOM_MODELS:
        factory, classes = CUSTOM_MODELS[args.model]
        model = factory()
        if not args.keep_dropout:
            for module in model.modules():
                if isinstance(module, torch.nn.Dropout):
                    module.p = 0.0
    else:
        model, classes = build_model(args.model, args.keep_dropout), 1000
    if args.bn_eps is not None:
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.eps = args.bn_eps
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, args.model + ".onnx")
        torch.onnx.export(copy.deepcopy(model), torch.randn(2, 3, args.size, args.size), path,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, opset_version=14,
                          input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
        state = {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy())
                 for t in onnx.load(path).graph.initializer}
        images = torch.randn(args.batch * args.steps, 3, args.size, args.size)
        labels = torch.randint(0, classes, (args.batch * args.steps,))
        data = os.path.join(tmp, "data.safetensors")
        write_dataset(data, images, labels)
        plan, ck = os.path.join(tmp, "plan.json"), os.path.join(tmp, "ck.safetensors")
        subprocess.run([args.layerplan, "plan", "--model", path, "--batch", str(args.batch), "--gpus", "1",
                        "--json", plan], check=True, capture_output=True)
        subprocess.run([args.layerplan, "train", "--plan", plan, "--model", path, "--data", data, "--steps",
                        str(args.steps), "--shuffle", "off", "--lr", str(args.lr), "--momentum", str(args.momentum),
                        "--kernels", args.kernels, "--init-from", path, "--save", ck], check=True,
                       capture_output=True)
        ours = read_safetensors(ck)
    start = {k: v.to(torch.float64).numpy() for k, v in state.items()}
    ref = torch_steps(model, state, torch.float64, images, labels, args.batch, args.steps, args.lr, args.momentum)
    f32 = torch_steps(model, state, torch.float32, images, labels, args.batch, args.steps, args.lr, args.momentum)
    names = [k for k in ref if k in start and not k.endswith("num_batches_tracked")]
    missing = [k for k in names if k not in ours]
    if missing:
        raise SystemExit(f"layerplan's checkpoint lacks {missing[:3]}")

    def spread(other):
        moved = sum(float(np.sum((ref[k] - start[k]) ** 2)) for k in names) ** 0.5
        off = sum(float(np.sum((other[k].astype(np.float64) - ref[k]) ** 2)) for k in names) ** 0.5
        worst = max(float(np.max(np.abs(other[k].astype(np.float64) - ref[k]))) for k in names)
        return off / moved, worst

    ours_rel, ours_max = spread(ours)
    f32_rel, f32_max = spread(f32)
    print(f"{args.model} {args.size}x{args.size}, batch {args.batch}, {args.steps} SGD steps (lr {args.lr}, momentum "
          f"{args.momentum}), {len(names)} tensors; distance from PyTorch float64, relative to how far it moved, and "
          f"the largest element difference:")
    print(f"  layerplan ({args.kernels}): {ours_rel:.3e}  max {ours_max:.3e}")
    print(f"  PyTorch float32:        {f32_rel:.3e}  max {f32_max:.3e}")
    ratio = ours_rel / max(f32_rel, 1e-300)
    print(f"  layerplan / PyTorch float32: {ratio:.2f}" + (" (no further)" if ratio <= 1 else " (further)"))
    if args.float32_variants:
        spreads = [f32_rel]
        for variant in FLOAT32_VARIANTS:
            other = torch_steps(model, state, torch.float32, images, labels, args.batch, args.steps, args.lr,
                                args.momentum, variant)
            rel, worst = spread(other)
            spreads.append(rel)
            print(f"  PyTorch float32, {variant}: {rel:.3e}  max {worst:.3e}")
        print(f"  layerplan / the furthest PyTorch float32 run: {ours_rel / max(spreads):.2f}")


if __name__ == "__main__":
    main()
