#!/usr/bin/env python3
"""Compares two training runs of the Slurm tests (standard library only).

  compare_runs.py losses A.jsonl B.jsonl STEPS
      the per-step losses of two --log-json files: the same STEPS steps, each loss within
      1e-4 relative of B's
  compare_runs.py checkpoints A.safetensors B.safetensors
      two checkpoints: the same tensor names, dtypes and shapes, and for every weight the
      largest difference within 1e-4 of B's largest magnitude; for every momentum buffer
      within 1e-2 (why: below)

  compare_runs.py complete FILE.safetensors
      a checkpoint that is whole: its header parses and its data is exactly as long as the
      header's offsets say

Prints one line saying what was compared and the largest difference found; exits 0 when
within tolerance, 1 otherwise.
"""
import array
import json
import struct
import sys

TOLERANCE = 1e-4
# A momentum buffer is a running sum of gradients, and a gradient is a sum over the whole
# batch whose terms largely cancel: summed in another order (per rank, then across ranks)
# it differs by ~1e-5 of its largest element after one step of LeNet-5 at batch 1920, and
# 20 steps of SGD take that to ~2e-3 while the weights stay within ~4e-5 (measured:
# docs/runtime.md, "How close a run of several ranks is to one process").
MOMENTUM_TOLERANCE = 1e-2
MOMENTUM_PREFIX = "momentum_buffer."


def losses(a_path, b_path, steps):
    def read(path):
        with open(path) as f:
            return {line["step"]: line["loss"] for line in map(json.loads, f) if "loss" in line}

    a, b = read(a_path), read(b_path)
    if sorted(a) != sorted(b) or len(a) != steps:
        return False, f"steps differ: {sorted(a)} against {sorted(b)}, expected {steps}"
    worst = max(abs(a[s] - b[s]) / max(abs(b[s]), 1e-12) for s in a)
    return worst <= TOLERANCE, f"{steps} steps, largest relative difference {worst:.2e}"


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (header_size,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8 : 8 + header_size])
    header.pop("__metadata__", None)
    body = data[8 + header_size :]
    end = max((entry["data_offsets"][1] for entry in header.values()), default=0)
    if len(body) != end:
        raise ValueError(f"{path}: {len(body)} bytes of data, the header says {end}")
    tensors = {}
    for name, entry in header.items():
        if entry["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} is {entry['dtype']}, expected F32")
        begin, end = entry["data_offsets"]
        values = array.array("f")
        values.frombytes(body[begin:end])
        if sys.byteorder != "little":
            values.byteswap()
        tensors[name] = (tuple(entry["shape"]), values)
    return tensors


def checkpoints(a_path, b_path):
    a, b = read_safetensors(a_path), read_safetensors(b_path)
    if sorted(a) != sorted(b):
        return False, f"tensor names differ: {sorted(set(a) ^ set(b))}"
    worst = {False: (0.0, ""), True: (0.0, "")}  # is a momentum buffer: (difference, tensor)
    for name, (shape, values) in b.items():
        other_shape, other = a[name]
        if other_shape != shape:
            return False, f"{name}: shape {other_shape} against {shape}"
        scale = max((abs(v) for v in values), default=0.0) or 1.0
        diff = max((abs(x - y) for x, y in zip(other, values)), default=0.0) / scale
        momentum = name.startswith(MOMENTUM_PREFIX)
        if diff >= worst[momentum][0]:
            worst[momentum] = (diff, name)
    weights, buffers = worst[False], worst[True]
    good = weights[0] <= TOLERANCE and buffers[0] <= MOMENTUM_TOLERANCE
    return good, (
        f"{len(b)} tensors; largest difference of the tensor's largest magnitude: weights {weights[0]:.2e}"
        f" ({weights[1]}, at most {TOLERANCE:g}), momentum buffers {buffers[0]:.2e} ({buffers[1] or 'none'},"
        f" at most {MOMENTUM_TOLERANCE:g})"
    )


def main(argv):
    try:
        if len(argv) == 5 and argv[1] == "losses":
            good, line = losses(argv[2], argv[3], int(argv[4]))
        elif len(argv) == 4 and argv[1] == "checkpoints":
            good, line = checkpoints(argv[2], argv[3])
        elif len(argv) == 3 and argv[1] == "complete":
            good, line = True, f"{len(read_safetensors(argv[2]))} tensors, complete"
        else:
            print(__doc__.strip().splitlines()[2], file=sys.stderr)
            return 2
    except (OSError, ValueError, KeyError, TypeError, struct.error) as e:
        good, line = False, f"cannot compare: {e}"
    print(line)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
