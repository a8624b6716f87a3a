#!/usr/bin/python3
"""Writes an ONNX model: an image input N x 3 x 8 x 8, then a chain of COUNT Relu nodes, as raw
protobuf (no onnx package needed), for the limits before work (docs/BENCHMARKS.md, "ONNX
limits before work"):
  python3 bench/onnx_relu_chain.py 1000000 relu_1e6.onnx
"""
import sys

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)

def field(num, payload):  # length-delimited
    return varint(num << 3 | 2) + varint(len(payload)) + payload

def vfield(num, value):
    return varint(num << 3) + varint(value)

def s(x):
    return x.encode()

count, path = int(sys.argv[1]), sys.argv[2]
nodes = bytearray()
prev = "input"
for i in range(count):
    out = f"r{i}"
    nodes += field(1, field(1, s(prev)) + field(2, s(out)) + field(3, s(f"/relu{i}")) + field(4, b"Relu"))
    prev = out
dims = field(1, field(2, b"batch")) + b"".join(field(1, vfield(1, d)) for d in (3, 8, 8))
tensor_type = field(1, vfield(1, 1) + field(2, dims))
graph = bytes(nodes) + field(2, b"g") + field(11, field(1, b"input") + field(2, tensor_type)) + \
    field(12, field(1, s(prev)) + field(2, field(1, vfield(1, 1) + field(2, field(1, b"") * 4))))
model = vfield(1, 8) + field(8, field(1, b"") + vfield(2, 14)) + field(7, graph)
open(path, "wb").write(model)
