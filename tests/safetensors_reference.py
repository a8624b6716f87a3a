#!/usr/bin/env python3
"""Cross-check for runtime/safetensors.{h,cc} with the reference implementation: the
`safetensors` package (PyPI) with numpy, which scripts/setup installs in a venv.

  safetensors_reference.py read PATH    print the file as JSON:
      {"metadata": {...}, "tensors": {name: {"dtype": "F32", "shape": [...], "values": [...]}}}
  safetensors_reference.py write PATH   write the tensors tests/safetensors_test.cc expects
"""
import json
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

DTYPES = {
    np.dtype("bool"): "BOOL", np.dtype("uint8"): "U8", np.dtype("int8"): "I8",
    np.dtype("int16"): "I16", np.dtype("uint16"): "U16", np.dtype("float16"): "F16",
    np.dtype("int32"): "I32", np.dtype("uint32"): "U32", np.dtype("float32"): "F32",
    np.dtype("int64"): "I64", np.dtype("uint64"): "U64", np.dtype("float64"): "F64",
}


def read(path):
    tensors = {}
    with safe_open(path, framework="np") as f:
        metadata = f.metadata() or {}
        for name in f.keys():
            t = f.get_tensor(name)
            tensors[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                             "values": t.reshape(-1).tolist()}
    print(json.dumps({"metadata": metadata, "tensors": tensors}))


def write(path):
    tensors = {
        "conv.weight": (np.arange(24, dtype=np.float32) * 0.5 - 3).reshape(2, 3, 2, 2),
        "labels": np.array([[-1, 2**40], [7, 0]], dtype=np.int64),
        "half": np.array([1.5, -2, 65504], dtype=np.float16),
        "mask": np.array([True, False, True]),
        "bytes": np.array([0, 255, 7], dtype=np.uint8),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    save_file(tensors, path, metadata={"format": "np", "written_by": "safetensors-reference"})


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("read", "write"):
        sys.exit("usage: safetensors_reference.py read|write PATH")
    (read if sys.argv[1] == "read" else write)(sys.argv[2])
