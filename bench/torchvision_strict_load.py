#!/usr/bin/python3
"""Loads checkpoints that `layerplan train` wrote into torchvision models with
load_state_dict(strict=True), and checks that the model then computes what layerplan's
weights say: every tensor equal to the file's, and the evaluation-mode output of one image
finite. In CI, without torch, TrainCommand.ResNet50WeightsAreExactlyTorchvisionsStateDict
checks the same file against tests/data/torchvision/resnet50_state_dict.txt, torchvision's
own list of names, dtypes and shapes.

Needs Debian's python3-torch and python3-torchvision (not installed by scripts/setup; the
safetensors files are read with torch alone):
  /usr/bin/python3 bench/torchvision_strict_load.py BUILD_DIR [MODEL ...]   (default: resnet50 alexnet vgg16)
Prints one line a model; exits 1 when any model fails.
"""
import json
import pathlib
import struct
import subprocess
import sys
import tempfile

import torch
import torchvision

DTYPES = {"F32": torch.float32, "I64": torch.int64}


def read_safetensors(path):
    """The tensors of a safetensors file, read with the format's own 8-byte header length."""
    data = pathlib.Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    start = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = bytearray(data[start + begin:start + end])
        tensors[name] = torch.frombuffer(raw, dtype=DTYPES[info["dtype"]]).reshape(info["shape"]).clone()
    return tensors


def check(layerplan, model_name, work):
    plan = work / f"{model_name}.json"
    weights = work / f"{model_name}.safetensors"
    subprocess.run([layerplan, "plan", "--model", model_name, "--batch", "1", "--gpus", "1", "--gpus-per-node", "1",
                    "--json", str(plan)], check=True, capture_output=True)
    subprocess.run([layerplan, "train", "--plan", str(plan), "--steps", "1", "--save", str(weights)], check=True,
                   capture_output=True)
    state = read_safetensors(weights)
    model = getattr(torchvision.models, model_name)()
    model.load_state_dict(state, strict=True)  # raises on a missing or unexpected key, or a shape
    for name, tensor in model.state_dict().items():
        if not torch.equal(tensor, state[name]):
            raise AssertionError(f"{name} differs from the file after loading")
    model.eval()
    with torch.no_grad():
        out = model(torch.randn(1, 3, 224, 224))
    if not torch.isfinite(out).all():
        raise AssertionError("the output is not finite")
    return len(state), weights.stat().st_size


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    layerplan = str(pathlib.Path(args[0]) / "layerplan")
    models = args[1:] or ["resnet50", "alexnet", "vgg16"]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            try:
                count, size = check(layerplan, name, pathlib.Path(tmp))
                print(f"ok - {name}: {count} tensors ({size / 2**20:.0f} MiB) load with strict=True "
                      f"(torch {torch.__version__}, torchvision {torchvision.__version__})")
            except Exception as error:  # noqa: BLE001 - every failure is reported the same way
                failures += 1
                print(f"not ok - {name}: {error}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
