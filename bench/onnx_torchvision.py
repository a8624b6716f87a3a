#!/usr/bin/python3
"""Exports torchvision models to ONNX for training and reads them with layerplan
(bench/onnx_torchvision.sh runs it; docs/BENCHMARKS.md, "ONNX import", has the results).

For each model: torch.onnx.export(training=TRAINING, do_constant_folding=False), then
`layerplan models --model FILE.onnx` (layers, parameters, multiply-adds) against
torchvision's parameter count and the built-in model's multiply-adds where one exists, and
`layerplan plan --model FILE.onnx` on 16 GPUs (4 nodes of 4), timed. A model whose export
layerplan refuses is listed with the refusal (operators layerplan does not read yet).

Needs Debian's python3-torch and python3-torchvision (not installed by scripts/setup):
  /usr/bin/python3 bench/onnx_torchvision.py [--opset N] [--reuse] BUILD_DIR OUT_DIR [MODEL...]
--opset: the opset exported (default 14); --reuse: an OUT_DIR/MODEL.onnx already there is
read as it is, not exported again. The export recipe is docs/model-format.md's.
"""
import argparse
import json
import os
import struct
import subprocess
import time
import warnings

import torch
import torchvision

# torchvision 0.14's classification CNNs without LayerNorm or attention, and VGG-16.
MODELS = ["alexnet", "densenet121", "efficientnet_b0", "efficientnet_v2_s", "googlenet", "inception_v3",
          "mnasnet0_5", "mobilenet_v2", "mobilenet_v3_small", "regnet_x_400mf", "regnet_y_400mf", "resnet18",
          "resnet50", "resnext50_32x4d", "shufflenet_v2_x0_5", "squeezenet1_0", "vgg11", "vgg16",
          "wide_resnet50_2"]
BUILT_IN = {"resnet50", "vgg16", "alexnet", "inception_v3"}


def build(name):
    """torchvision's model as docs/model-format.md's recipe builds it for export."""
    kwargs = {"aux_logits": False, "init_weights": False} if name in ("inception_v3", "googlenet") else {}
    model = getattr(torchvision.models, name)(**kwargs)
    for module in model.modules():  # PyTorch 1.13 cannot export stochastic depth's Bernoulli in training mode
        if isinstance(module, torchvision.ops.StochasticDepth):
            module.p = 0.0
    return model


def export(name, path, opset, reuse):
    model = build(name)
    if not (reuse and os.path.exists(path)):
        size = 299 if name == "inception_v3" else 224
        torch.onnx.export(model, torch.randn(2, 3, size, size), path, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, opset_version=opset, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    return sum(p.numel() for p in model.parameters())


def read_safetensors(path):
    """The F32 tensors of a safetensors file, as torch tensors (Debian has no python3-safetensors)."""
    data = open(path, "rb").read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        lo, hi = info["data_offsets"]
        out[name] = torch.frombuffer(bytearray(body[lo:hi]), dtype=torch.float32).reshape(info["shape"])
    return out


def checkpoint_loads_into_torch(name, layerplan, path, out):
    """`layerplan train --init-from FILE.onnx --save ck` for one step, then the checkpoint
    (momentum buffers left out) loads into torchvision's model with load_state_dict."""
    plan, ck = os.path.join(out, name + ".plan.json"), os.path.join(out, name + ".safetensors")
    subprocess.run([layerplan, "plan", "--model", path, "--gpus", "1", "--batch", "2", "--json", plan],
                   check=True, capture_output=True)
    subprocess.run([layerplan, "train", "--plan", plan, "--model", path, "--steps", "1", "--init-from", path,
                    "--save", ck], check=True, capture_output=True)
    state = {k: v for k, v in read_safetensors(ck).items() if not k.startswith("momentum_buffer.")}
    result = getattr(torchvision.models, name)().load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys if not k.endswith("num_batches_tracked")]
    return not missing and not result.unexpected_keys


def same_graph(layerplan, a, b):
    """Whether two models have the same layers in the same order (kinds, fields, inputs),
    whatever their names: `layerplan models --export` of each, compared."""
    def normalized(model):
        text = subprocess.run([layerplan, "models", "--export", model], capture_output=True, text=True, check=True)
        index, out = {"input": -1}, []
        for i, layer in enumerate(json.loads(text.stdout)["layers"]):
            index[layer["name"]] = i
            names = layer.get("inputs", [layer["input"]] if "input" in layer else None)
            inputs = [index[n] for n in names] if names else [i - 1]
            out.append(({k: v for k, v in layer.items() if k not in ("name", "input", "inputs")}, inputs))
        return out
    return normalized(a) == normalized(b)


def models_row(layerplan, model):
    r = subprocess.run([layerplan, "models", "--model", model], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    fields = r.stdout.splitlines()[1].split()
    return (int(fields[-3]), int(fields[-2]), float(fields[-1])), ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opset", type=int, default=14)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("build")
    parser.add_argument("out")
    parser.add_argument("models", nargs="*")
    args = parser.parse_args()
    out, names = args.out, args.models or MODELS
    layerplan = os.path.join(args.build, "layerplan")
    os.makedirs(out, exist_ok=True)
    print("| model | torchvision parameters | ONNX: layers | parameters | GMAC/image | built-in GMAC/image | "
          "plan on 16 GPUs (s) | result |")
    print("|---|---|---|---|---|---|---|---|")
    warnings.filterwarnings("ignore")
    for name in names:
        path = os.path.join(out, name + ".onnx")
        try:
            torch_params = export(name, path, args.opset, args.reuse)
        except Exception as e:  # pylint: disable=broad-except
            print(f"| {name} | — | — | — | — | — | — | torch.onnx.export failed: `{str(e).splitlines()[0][:120]}` |")
            continue
        row, error = models_row(layerplan, path)
        if row is None:
            print(f"| {name} | {torch_params:,} | — | — | — | — | — | refused: `{error[:160]}` |")
            continue
        layers, params, gmac = row
        built_in = models_row(layerplan, name)[0] if name in BUILT_IN else None
        start = time.monotonic()
        plan = subprocess.run([layerplan, "plan", "--model", path, "--gpus", "16", "--gpus-per-node", "4",
                               "--batch", "512"], capture_output=True, text=True)
        plan_s = time.monotonic() - start
        same_params = params == torch_params
        same_macs = built_in is None or abs(built_in[2] - gmac) < 1e-9
        verdict = "parameters equal" if same_params else "PARAMETERS DIFFER"
        if built_in is not None:
            verdict += ", MACs equal the built-in's" if same_macs else ", MACS DIFFER from the built-in's"
            verdict += ", the same graph" if same_graph(layerplan, path, name) else ", another graph"
        if name in ("resnet18", "alexnet"):
            loads = checkpoint_loads_into_torch(name, layerplan, path, out)
            verdict += ", its checkpoint loads with load_state_dict" if loads else ", CHECKPOINT DOES NOT LOAD"
        if plan.returncode != 0:
            verdict += f", plan failed: {plan.stderr.strip()[:120]}"
        built_in_text = f"{built_in[2]:.3f}" if built_in else "—"
        print(f"| {name} | {torch_params:,} | {layers} | {params:,} | {gmac:.3f} | {built_in_text} | {plan_s:.2f} | "
              f"{verdict} |")


if __name__ == "__main__":
    main()
