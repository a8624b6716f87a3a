#!/usr/bin/python3
"""Writes tests/optimizer_data/torch_training_cases.json: three training steps of a small
net (conv, batch norm, ReLU, global average pool, fully connected, cross-entropy)
under PyTorch's optimizers, learning-rate schedulers, label smoothing and gradient
clipping, in float32 and in float64, from the same initial parameters and batches; and
the learning rates of longer runs of the schedulers. executor_optimizer_torch_test.cc
trains the same steps with every optimizer setting and checks that the executor is no
further from the float64 run than PyTorch's float32 run is. Run with Debian's
python3-torch (1.13):

    /usr/bin/python3 tests/optimizer_data/generate.py

Layouts are PyTorch's (NCHW, conv weight [out][in][kh][kw], linear weight [out][in]).
"""
import json
import os

import torch
import torch.nn as nn

BATCH, CHANNELS, SIZE, FEATURES, CLASSES, STEPS = 4, 3, 6, 4, 5, 3


def flat(t):
    # 17 significant digits round-trip a float64; float32 values stay exact.
    return [float(f"{v:.17g}") for v in t.detach().reshape(-1).tolist()]


def make_net(dtype):
    net = nn.Sequential(
        nn.Conv2d(CHANNELS, FEATURES, 3, padding=1, bias=False),
        nn.BatchNorm2d(FEATURES),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(FEATURES, CLASSES),
    )
    return net.to(dtype)


# Our layer names for PyTorch's state_dict names.
NAMES = {"0.weight": "conv.weight", "1.weight": "bn.weight", "1.bias": "bn.bias",
         "1.running_mean": "bn.running_mean", "1.running_var": "bn.running_var", "5.weight": "fc.weight",
         "5.bias": "fc.bias"}


def initial_state(gen):
    net = make_net(torch.float32)
    state = {}
    for key, value in net.state_dict().items():
        if key not in NAMES:
            continue
        if key.endswith("weight") or key.endswith("bias"):
            # Batch norm's too, so that its weight decay shows.
            value = torch.randn(value.shape, generator=gen, dtype=torch.float32) * 0.5
            if key == "1.weight":
                value = value + 1
        state[key] = value.clone()
    return state


def batches(gen):
    out = []
    for _ in range(STEPS):
        x = torch.randn(BATCH, CHANNELS, SIZE, SIZE, generator=gen, dtype=torch.float32)
        y = torch.randint(0, CLASSES, (BATCH,), generator=gen)
        out.append((x, y))
    return out


def param_groups(net, options):
    if options.get("decay_bn_bias", True):
        return [{"params": list(net.parameters())}]
    decay, no_decay = [], []
    for name, p in net.named_parameters():
        (no_decay if name.endswith("bias") or name.startswith("1.") else decay).append(p)
    return [{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]


def optimizer_of(net, options):
    groups = param_groups(net, options)
    if options["optimizer"] == "adamw":
        return torch.optim.AdamW(groups, lr=options["lr"], betas=tuple(options["betas"]), eps=options["eps"],
                                 weight_decay=options["weight_decay"])
    return torch.optim.SGD(groups, lr=options["lr"], momentum=options["momentum"],
                           weight_decay=options["weight_decay"], nesterov=options.get("nesterov", False))


def scheduler_of(opt, options, total):
    """SequentialLR([LinearLR(start_factor=1/(W+1), total_iters=W), main], milestones=[W]);
    main alone when W = 0."""
    warmup = options.get("warmup_steps", 0)
    kind = options.get("lr_schedule", "constant")
    if kind == "cosine":
        main = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=0)
    elif kind == "step":
        main = torch.optim.lr_scheduler.StepLR(opt, step_size=options["lr_step_every"], gamma=options["lr_gamma"])
    else:
        main = torch.optim.lr_scheduler.ConstantLR(opt, factor=1.0, total_iters=0)
    if warmup == 0:
        return main
    warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1 / (warmup + 1), end_factor=1.0, total_iters=warmup)
    return torch.optim.lr_scheduler.SequentialLR(opt, [warm, main], milestones=[warmup])


def train(options, state, data, dtype):
    net = make_net(dtype)
    net.load_state_dict({k: v.to(dtype) for k, v in state.items()}, strict=False)
    net.train()
    opt = optimizer_of(net, options)
    sched = scheduler_of(opt, options, STEPS)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=options.get("label_smoothing", 0.0))
    losses, lrs, norms = [], [], []
    for x, y in data:
        lrs.append(opt.param_groups[0]["lr"])
        opt.zero_grad()
        loss = loss_fn(net(x.to(dtype)), y)
        loss.backward()
        if options.get("clip_grad_norm", 0) > 0:
            norms.append(float(nn.utils.clip_grad_norm_(net.parameters(), options["clip_grad_norm"])))
        opt.step()
        sched.step()
        losses.append(float(loss))
    params = {NAMES[k]: flat(v) for k, v in net.state_dict().items() if k in NAMES}
    return {"losses": losses, "lrs": lrs, "grad_norms": norms, "params": params}


SGD = {"optimizer": "sgd", "lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}
ADAMW = {"optimizer": "adamw", "lr": 0.01, "betas": [0.9, 0.99], "eps": 1e-8, "weight_decay": 0.1}
CASES = [
    ("sgd", SGD),
    ("sgd_nesterov", {**SGD, "nesterov": True}),
    ("sgd_no_decay_bn_bias", {**SGD, "weight_decay": 0.05, "decay_bn_bias": False}),
    ("sgd_warmup_cosine", {**SGD, "warmup_steps": 1, "lr_schedule": "cosine"}),
    ("sgd_warmup_step", {**SGD, "warmup_steps": 1, "lr_schedule": "step", "lr_step_every": 1, "lr_gamma": 0.3}),
    ("sgd_label_smoothing", {**SGD, "label_smoothing": 0.1}),
    ("sgd_clip_grad_norm", {**SGD, "clip_grad_norm": 0.05}),
    ("adamw", ADAMW),
    ("adamw_no_decay_clip_smoothing",
     {**ADAMW, "decay_bn_bias": False, "clip_grad_norm": 0.05, "label_smoothing": 0.2, "warmup_steps": 1,
      "lr_schedule": "cosine"}),
]

# Longer runs of the schedulers alone: the rate of every step.
SCHEDULES = [
    {"warmup_steps": 0, "lr_schedule": "cosine", "total": 10},
    {"warmup_steps": 4, "lr_schedule": "cosine", "total": 20},
    {"warmup_steps": 3, "lr_schedule": "constant", "total": 8},
    {"warmup_steps": 0, "lr_schedule": "step", "lr_step_every": 3, "lr_gamma": 0.5, "total": 10},
    {"warmup_steps": 5, "lr_schedule": "step", "lr_step_every": 4, "lr_gamma": 0.1, "total": 20},
]


def schedule_rates(options):
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.2)
    sched = scheduler_of(opt, options, options["total"])
    rates = []
    for _ in range(options["total"]):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return rates


def main():
    gen = torch.Generator().manual_seed(33)
    state = initial_state(gen)
    data = batches(gen)
    doc = {
        "net": {"batch": BATCH, "channels": CHANNELS, "size": SIZE, "features": FEATURES, "classes": CLASSES,
                "steps": STEPS},
        "initial": {NAMES[k]: flat(v) for k, v in state.items()},
        "batches": [{"x": flat(x), "y": y.tolist()} for x, y in data],
        "cases": [],
        "schedules": [],
    }
    for name, options in CASES:
        doc["cases"].append({"name": name, "options": options,
                             "float32": train(options, state, data, torch.float32),
                             "float64": train(options, state, data, torch.float64)})
    for options in SCHEDULES:
        doc["schedules"].append({**options, "lr": 0.2, "rates": schedule_rates(options)})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_training_cases.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
