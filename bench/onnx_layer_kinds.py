#!/usr/bin/python3
"""Two SGD steps against PyTorch (bench/onnx_sgd_vs_pytorch.py) on small nets of the layer
kinds torchvision's exports do not all show (docs/BENCHMARKS.md, "ONNX import"):

  pools     ceil_mode max pooling, ceil_mode average pooling without counted padding,
            x.view(x.size(0), -1) (Shape, Gather, Unsqueeze, Concat, Reshape), a Linear
            without bias (Transpose + MatMul) and one with (Gemm)
  padded    the same with an AvgPool2d(3, 3, padding=1, ceil_mode=True) counting padding
            (Pad + AveragePool), and x.reshape(-1, 16) (a constant shape)

  /usr/bin/python3 bench/onnx_layer_kinds.py --model pools --size 12 [--kernels reference]
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import onnx_sgd_vs_pytorch as bench


class Pools(nn.Module):
    def __init__(self, padded=False):
        super().__init__()
        self.padded = padded
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.avg = nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False)
        self.avg2 = nn.AvgPool2d(3, 3, 1, ceil_mode=True) if padded else nn.Identity()
        self.fc1 = nn.LazyLinear(6, bias=False)
        self.fc2 = nn.Linear(6, 5)

    def forward(self, x):
        x = self.avg2(self.avg(self.pool(F.relu(self.conv(x)))))
        x = x.reshape(-1, 4 * 2 * 2) if self.padded else x.view(x.size(0), -1)
        return self.fc2(F.relu(self.fc1(x)))


def made(padded):
    def factory():
        model = Pools(padded)
        model(torch.randn(1, 3, 12, 12))  # sizes the lazy layer (12x12 images, --size 12)
        return model
    return factory


bench.CUSTOM_MODELS.update({"pools": (made(False), 5), "padded": (made(True), 5)})

if __name__ == "__main__":
    bench.main()
