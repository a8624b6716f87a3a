#!/usr/bin/python3
"""Writes tests/kernels_data/torch_cases.json: PyTorch's outputs and gradients for one
small case of every layer kind, which kernels_torch_test.cc compares both kernel backends with;
tests/kernels_data/torch_grouped_cases.json, grouped and depthwise convolutions; and
torch_pool_cases.json, pools with ceil_mode and count_include_pad=False. Run with Debian's python3-torch (1.13):

    /usr/bin/python3 tests/kernels_data/generate.py

Every case holds its inputs, parameters and output gradient (float32, fixed seeds), so the
C++ test needs no PyTorch. Layouts are PyTorch's (NCHW, weight [out][in][kh][kw]).
"""
import json
import os

import torch
import torch.nn.functional as F

M64 = (1 << 64) - 1


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def dropout_keeps(seed, index, p=0.5):
    """Mirror of layerplan::dropout_keeps (runtime/kernels/kernel_types.cc)."""
    bits = mix(mix((seed + 0x9E3779B97F4A7C15) & M64) ^ index)
    return (bits >> 40) / 16777216.0 >= p


def flat(t):
    # 9 significant digits round-trip a float32 exactly and keep the file small.
    return [float(f"{v:.9g}") for v in t.detach().reshape(-1).tolist()]


def rand(gen, *shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float32)


def case(name, kind, **fields):
    out = {"name": name, "kind": kind}
    for key, value in fields.items():
        out[key] = flat(value) if isinstance(value, torch.Tensor) else value
    return out


def windowed(gen, name, kind, shape, window, out_channels=None, bias=True, groups=1):
    """window: kh, kw, sh, sw, ph, pw[, ceil_mode, count_include_pad] (pools only)."""
    kh, kw, sh, sw, ph, pw = window[:6]
    ceil, include = (bool(window[6]), bool(window[7])) if len(window) > 6 else (False, True)
    x = rand(gen, *shape).requires_grad_()
    fields = {"input_shape": list(shape), "window": list(window), "x": x}
    if kind == "conv2d":
        w = rand(gen, out_channels, shape[1] // groups, kh, kw).requires_grad_()
        b = rand(gen, out_channels).requires_grad_() if bias else None
        y = F.conv2d(x, w, b, stride=(sh, sw), padding=(ph, pw), groups=groups)
        fields.update(out_channels=out_channels, bias=bias, weight=w)
        if groups > 1:
            fields["groups"] = groups
        if bias:
            fields["bias_values"] = b
    elif kind == "max_pool":
        y = F.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw), ceil_mode=ceil)
    else:
        y = F.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw), ceil_mode=ceil, count_include_pad=include)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    fields.update(output=y, grad_output=dy, grad_input=x.grad)
    if kind == "conv2d":
        fields["grad_weight"] = w.grad
        if bias:
            fields["grad_bias"] = b.grad
    return case(name, kind, **fields)


def pool_cases():
    """Windows that overhang the border (ceil_mode) and averages without the padding."""
    gen = torch.Generator().manual_seed(2023)
    return [
        # googlenet's pools: 3/2 ceil on an even extent, the last window overhangs by one
        windowed(gen, "max pool 3 stride 2 ceil", "max_pool", (2, 3, 8, 10), (3, 3, 2, 2, 0, 0, 1, 1)),
        windowed(gen, "max pool 3 stride 2 pad 1 ceil", "max_pool", (1, 2, 10, 7), (3, 3, 2, 2, 1, 1, 1, 1)),
        windowed(gen, "max pool 2 stride 3 ceil", "max_pool", (1, 2, 8, 7), (2, 2, 3, 3, 0, 0, 1, 1)),
        windowed(gen, "avg pool 3 stride 2 ceil", "avg_pool", (2, 2, 8, 9), (3, 3, 2, 2, 0, 0, 1, 1)),
        windowed(gen, "avg pool 3 stride 2 pad 1 ceil", "avg_pool", (1, 3, 8, 10), (3, 3, 2, 2, 1, 1, 1, 1)),
        windowed(gen, "avg pool 3 stride 1 pad 1 exclude pad", "avg_pool", (2, 3, 6, 5), (3, 3, 1, 1, 1, 1, 0, 0)),
        windowed(gen, "avg pool 3x2 stride 2 pad (1,1) ceil exclude pad", "avg_pool", (1, 2, 8, 9),
                 (3, 2, 2, 2, 1, 1, 1, 0)),
        windowed(gen, "avg pool 2 stride 2 ceil exclude pad", "avg_pool", (2, 2, 7, 5), (2, 2, 2, 2, 0, 0, 1, 0)),
    ]


def write(name, cases):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    with open(path, "w") as f:
        json.dump({"generator": "tests/kernels_data/generate.py", "torch": torch.__version__, "cases": cases}, f)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {path}")


def grouped_cases():
    """Grouped and depthwise convolutions (torch_grouped_cases.json, a generator of its own)."""
    gen = torch.Generator().manual_seed(2019)
    return [
        windowed(gen, "conv depthwise 3x3 pad 1", "conv2d", (2, 4, 6, 6), (3, 3, 1, 1, 1, 1), 4, groups=4),
        windowed(gen, "conv depthwise x2 3x3 stride 2", "conv2d", (1, 3, 7, 7), (3, 3, 2, 2, 1, 1), 6, bias=False,
                 groups=3),
        windowed(gen, "conv group 2 3x3 pad 1", "conv2d", (2, 4, 5, 5), (3, 3, 1, 1, 1, 1), 6, groups=2),
    ]


def with_kinks(x):
    """x with the points where the activations bend (-3, 0, 3, 6) written in exactly."""
    x.view(-1)[:5] = torch.tensor([-3.0, 0.0, 3.0, 6.0, -6.0])
    return x


def activation_cases(gen):
    """The element-wise activations (kinks included), mul, and batch norm and dropout with
    the epsilon, momentum and ratio a model file sets."""
    cases = []
    activations = [
        ("relu6", "clip", lambda t: F.relu6(t), {"min": 0.0, "max": 6.0}),
        ("clip -1.5 2", "clip", lambda t: F.hardtanh(t, -1.5, 2.0), {"min": -1.5, "max": 2.0}),
        ("sigmoid", "sigmoid", torch.sigmoid, {}),
        ("silu", "silu", F.silu, {}),
        ("hardsigmoid", "hardsigmoid", F.hardsigmoid, {}),
        ("hardswish", "hardswish", F.hardswish, {}),
    ]
    for name, kind, fn, params in activations:
        x = with_kinks(rand(gen, 2, 3, 4, 4) * 4).requires_grad_()
        y = fn(x)
        dy = rand(gen, *y.shape)
        y.backward(dy)
        cases.append(case(name, kind, input_shape=[2, 3, 4, 4], x=x, output=y, grad_output=dy, grad_input=x.grad,
                          **params))

    for name, scale_shape in (("mul", [2, 3, 4, 4]), ("mul broadcast (SE scale)", [2, 3, 1, 1])):
        a = rand(gen, 2, 3, 4, 4).requires_grad_()
        s = rand(gen, *scale_shape).requires_grad_()
        y = a * s
        dy = rand(gen, *y.shape)
        y.backward(dy)
        cases.append(case(name, "mul", input_shapes=[[2, 3, 4, 4], scale_shape], inputs=[flat(a), flat(s)],
                          output=y, grad_output=dy, grad_inputs=[flat(a.grad), flat(s.grad)]))

    x = (rand(gen, 3, 4, 3, 5) * 0.05 + 0.5).requires_grad_()  # a small variance, where epsilon shows
    w = rand(gen, 4).requires_grad_()
    b = rand(gen, 4).requires_grad_()
    running_mean = rand(gen, 4)
    running_var = torch.rand(4, generator=gen) + 0.5
    rm, rv = running_mean.clone(), running_var.clone()
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-2)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("batch norm eps 1e-2 momentum 0.3", "batch_norm", input_shape=[3, 4, 3, 5], epsilon=1e-2,
                      momentum=0.3, x=x, weight=w, bias_values=b, running_mean=running_mean,
                      running_var=running_var, output=y, grad_output=dy, grad_input=x.grad, grad_weight=w.grad,
                      grad_bias=b.grad, new_running_mean=rm, new_running_var=rv))

    seed, ratio = 5, 0.2
    x = rand(gen, 2, 3, 4, 4).requires_grad_()
    mask = torch.tensor([1.0 if dropout_keeps(seed, i, ratio) else 0.0 for i in range(x.numel())]).reshape(x.shape)
    y = x * mask / (1 - ratio)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("dropout ratio 0.2", "dropout", input_shape=[2, 3, 4, 4], seed=seed, ratio=ratio, x=x,
                      output=y, grad_output=dy, grad_input=x.grad))
    return cases


def main():
    write("torch_pool_cases.json", pool_cases())
    gen = torch.Generator().manual_seed(2018)
    cases = [
        windowed(gen, "conv 3x3 stride 2 pad 1", "conv2d", (2, 3, 7, 7), (3, 3, 2, 2, 1, 1), 4),
        windowed(gen, "conv 5x5 no pad no bias", "conv2d", (2, 2, 9, 8), (5, 5, 1, 1, 0, 0), 3, bias=False),
        windowed(gen, "conv 1x3 pad (0,1)", "conv2d", (1, 3, 5, 6), (1, 3, 1, 1, 0, 1), 2),
        windowed(gen, "max pool 3 stride 2 pad 1", "max_pool", (2, 3, 9, 9), (3, 3, 2, 2, 1, 1)),
        windowed(gen, "max pool 3 stride 2", "max_pool", (1, 2, 9, 8), (3, 3, 2, 2, 0, 0)),
        windowed(gen, "avg pool 3 stride 1 pad 1", "avg_pool", (2, 3, 6, 5), (3, 3, 1, 1, 1, 1)),
    ]

    x = rand(gen, 2, 3, 4, 5).requires_grad_()
    y = F.adaptive_avg_pool2d(x, 1)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("global avg pool", "global_avg_pool", input_shape=[2, 3, 4, 5], x=x, output=y,
                      grad_output=dy, grad_input=x.grad))

    x = rand(gen, 3, 2, 3, 3).requires_grad_()
    w = rand(gen, 5, 18).requires_grad_()
    b = rand(gen, 5).requires_grad_()
    y = F.linear(torch.flatten(x, 1), w, b)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("fully connected", "fully_connected", input_shape=[3, 2, 3, 3], out_channels=5, x=x,
                      weight=w, bias_values=b, output=y, grad_output=dy, grad_input=x.grad, grad_weight=w.grad,
                      grad_bias=b.grad))

    x = rand(gen, 2, 3, 4, 4).requires_grad_()
    y = F.relu(x)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("relu", "relu", input_shape=[2, 3, 4, 4], x=x, output=y, grad_output=dy, grad_input=x.grad))

    x = (rand(gen, 3, 4, 3, 5) * 2 + 0.5).requires_grad_()
    w = rand(gen, 4).requires_grad_()
    b = rand(gen, 4).requires_grad_()
    running_mean = rand(gen, 4)
    running_var = torch.rand(4, generator=gen) + 0.5
    rm, rv = running_mean.clone(), running_var.clone()
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("batch norm", "batch_norm", input_shape=[3, 4, 3, 5], x=x, weight=w, bias_values=b,
                      running_mean=running_mean, running_var=running_var, output=y, grad_output=dy,
                      grad_input=x.grad, grad_weight=w.grad, grad_bias=b.grad, new_running_mean=rm,
                      new_running_var=rv))

    seed = 7
    x = rand(gen, 2, 3, 4, 4).requires_grad_()
    mask = torch.tensor([1.0 if dropout_keeps(seed, i) else 0.0 for i in range(x.numel())]).reshape(x.shape)
    y = x * mask / (1 - 0.5)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("dropout", "dropout", input_shape=[2, 3, 4, 4], seed=seed, x=x, output=y, grad_output=dy,
                      grad_input=x.grad))

    a = rand(gen, 2, 2, 3, 3).requires_grad_()
    c = rand(gen, 2, 3, 3, 3).requires_grad_()
    y = torch.cat([a, c], 1)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("concat", "concat", input_shapes=[[2, 2, 3, 3], [2, 3, 3, 3]], inputs=[flat(a), flat(c)],
                      output=y, grad_output=dy, grad_inputs=[flat(a.grad), flat(c.grad)]))

    a = rand(gen, 2, 3, 2, 2).requires_grad_()
    c = rand(gen, 2, 3, 2, 2).requires_grad_()
    y = a + c
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("add", "add", input_shapes=[[2, 3, 2, 2], [2, 3, 2, 2]], inputs=[flat(a), flat(c)], output=y,
                      grad_output=dy, grad_inputs=[flat(a.grad), flat(c.grad)]))

    x = rand(gen, 2, 3, 2, 2).requires_grad_()
    y = torch.flatten(x, 1)
    dy = rand(gen, *y.shape)
    y.backward(dy)
    cases.append(case("flatten", "flatten", input_shape=[2, 3, 2, 2], x=x, output=y, grad_output=dy,
                      grad_input=x.grad))

    x = (rand(gen, 4, 6) * 3).requires_grad_()
    labels = [3, 0, 5, 3]
    loss = F.cross_entropy(x, torch.tensor(labels))  # reduction='mean'
    loss.backward()
    cases.append(case("softmax cross entropy", "softmax_cross_entropy", input_shape=[4, 6, 1, 1], x=x,
                      labels=labels, loss=float(loss), probabilities=F.softmax(x, 1), grad_input=x.grad))

    cases += activation_cases(gen)

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_cases.json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/kernels_data/generate.py", "torch": torch.__version__, "cases": cases}, f)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {path}")
    write("torch_grouped_cases.json", grouped_cases())


if __name__ == "__main__":
    main()
