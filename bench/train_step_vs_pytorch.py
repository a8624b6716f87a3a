#!/usr/bin/python3
"""Single-process training step time of `layerplan train` against PyTorch, same CPU and threads.

For each case (model, batch) it trains both for --steps steps of SGD (momentum 0.9) on random
224x224 images and prints the median step time after the first (warm-up) step, and their
ratio (layerplan / PyTorch; below 1 is faster). Both run with the same OMP_NUM_THREADS, one
after the other, alternating --rounds times, so a change of load hits both.

Needs Debian's python3-torch and python3-torchvision (run with /usr/bin/python3, where
they are installed) and a built `layerplan` (scripts/build). Usage:

  /usr/bin/python3 bench/train_step_vs_pytorch.py [--threads 2] [--steps 5] [--rounds 2]
      [--layerplan build/layerplan] [--case resnet50:8] [--case alexnet:32]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TORCH_STEPS = r"""
import sys, time, torch, torchvision
name, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(1)
model = getattr(torchvision.models, name)()
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
x = torch.randn(batch, 3, 224, 224)
y = torch.randint(0, 1000, (batch,))
for _ in range(steps):
    t = time.perf_counter()
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
    print(time.perf_counter() - t, flush=True)
"""


def median_after_first(times):
    if len(times) < 2:
        raise SystemExit("need at least 2 steps to drop the warm-up step")
    return statistics.median(times[1:])


def layerplan_steps(binary, model, batch, steps, env, tmp):
    plan = os.path.join(tmp, f"{model}-{batch}.json")
    log = os.path.join(tmp, f"{model}-{batch}.log.jsonl")
    subprocess.run([binary, "plan", "--model", model, "--batch", str(batch), "--gpus", "1",
                    "--gpus-per-node", "1", "--json", plan], check=True, stdout=subprocess.DEVNULL, env=env)
    subprocess.run([binary, "train", "--plan", plan, "--data", "synthetic", "--steps", str(steps),
                    "--kernels", "onednn", "--lr", "0.01", "--momentum", "0.9", "--log-every", "1000",
                    "--log-json", log], check=True, stdout=subprocess.DEVNULL, env=env)
    times = []
    with open(log) as f:
        for line in f:
            record = json.loads(line)
            if "images_per_s" in record:
                times.append(batch / record["images_per_s"])
    return times


def pytorch_steps(model, batch, steps, env):
    out = subprocess.run(["/usr/bin/python3", "-c", TORCH_STEPS, model, str(batch), str(steps)], check=True,
                         capture_output=True, text=True, env=env)
    return [float(v) for v in out.stdout.split()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--layerplan", default="build/layerplan")
    parser.add_argument("--case", action="append", help="model:batch (default resnet50:8 and alexnet:32)")
    args = parser.parse_args()
    cases = args.case or ["resnet50:8", "alexnet:32"]
    if args.threads < 1 or args.steps < 2 or args.rounds < 1:
        print("train_step_vs_pytorch: --threads and --rounds must be at least 1, --steps at least 2",
              file=sys.stderr)
        return 2
    if not os.access(args.layerplan, os.X_OK):
        print(f"train_step_vs_pytorch: '{args.layerplan}' is not an executable: build it with scripts/build",
              file=sys.stderr)
        return 2
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    print(f"threads {args.threads}, {args.steps} steps per run (median of steps 2..{args.steps}), "
          f"{args.rounds} round(s) alternating; {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{'model':<10} {'batch':>5} {'layerplan s':>12} {'pytorch s':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            model, batch = case.split(":")
            ours, theirs = [], []
            for _ in range(args.rounds):
                ours.append(median_after_first(layerplan_steps(args.layerplan, model, int(batch), args.steps, env,
                                                               tmp)))
                theirs.append(median_after_first(pytorch_steps(model, int(batch), args.steps, env)))
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"{model:<10} {batch:>5} {a:>12.3f} {b:>10.3f} {a / b:>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
