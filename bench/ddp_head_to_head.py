#!/usr/bin/python3
"""Data-parallel training step of `layerplan launch ... train` against PyTorch DDP, same cores.

For each case (model, images per rank) it trains, one after the other and alternating
--rounds times so that a change of load hits all three:
  - layerplan: `layerplan launch --nproc N -- layerplan train` on a data-parallel plan
    (`layerplan plan --mode data --gpus N --gpus-per-node N`), synthetic data; layerplan
    synchronises the batch-norm statistics across the ranks, as SyncBatchNorm does;
  - PyTorch DDP with SyncBatchNorm (`torch.nn.SyncBatchNorm.convert_sync_batchnorm`);
  - PyTorch DDP with each rank's own batch norm (DDP's default).
PyTorch runs N processes over Gloo, each pinned with os.sched_setaffinity to the CPUs
`layerplan launch` gives the rank of the same number (common/cpu_shares.h: contiguous blocks
of this process's CPUs, the first ones a CPU larger; with more ranks than CPUs, CPU k mod M),
with OMP_NUM_THREADS and torch.set_num_threads set to the block's size and the launcher's
GOMP_SPINCOUNT. Both sides: SGD with momentum 0.9, random 224x224 images. It prints, per case,
the median step time (rank 0, steps 2..--steps, the first being warm-up; median over the
rounds) of each and the ratios layerplan / DDP+SyncBN (target <= 0.90) and layerplan / DDP
(target <= 1.00).

torch 1.13's SyncBatchNorm refuses CPU tensors ("SyncBatchNorm expected input tensor to be on
GPU") and DDP refuses it in a CPU module ("SyncBatchNorm layers only work with GPU modules"),
so after convert_sync_batchnorm the script turns each SyncBatchNorm into CpuSyncBatchNorm (below):
the same communication as torch's (forward: all_gather of each rank's mean, variance and count;
backward: one all_reduce of the sums of dy and dy*(x-mean)) and the same arithmetic, written with
unfused torch operations, where torch's CUDA kernels fuse them.

Needs Debian's python3-torch and python3-torchvision (run with /usr/bin/python3) and a built
`layerplan` (scripts/build). Usage:

  /usr/bin/python3 bench/ddp_head_to_head.py [--nproc 2] [--steps 5] [--rounds 2]
      [--layerplan build/layerplan] [--case resnet50:16] [--case vgg16:16] [--json FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import count

TARGET_SYNC_BN = 0.90
TARGET_DDP = 1.00
STORE_NUMBERS = count()

# One DDP rank: RANK, WORLD_SIZE and OMP_NUM_THREADS come from the environment, the CPUs from
# the affinity the parent set before exec. Rank 0 prints each step's seconds.
DDP_RANK = r"""
import os, sys, time, torch, torchvision
import torch.distributed as dist
import torch.nn.functional as F

name, batch, steps, sync_bn, store = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)


class SyncBatchNormFn(torch.autograd.Function):
    # torch 1.13's SyncBatchNorm arithmetic (torch/nn/modules/_functions.py) on CPU tensors.
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, num_batches_tracked, eps, momentum):
        dims, shape = (0, 2, 3), (1, -1, 1, 1)
        var, mean = torch.var_mean(x, dim=dims, unbiased=False)
        local = torch.stack([mean, var, torch.full_like(mean, x.numel() // x.size(1))])
        gathered = [torch.empty_like(local) for _ in range(world)]
        dist.all_gather(gathered, local)
        g = torch.stack(gathered)
        counts = g[:, 2]
        total = counts.sum(0)
        gmean = (g[:, 0] * counts).sum(0) / total
        gvar = ((g[:, 1] + (g[:, 0] - gmean) ** 2) * counts).sum(0) / total
        num_batches_tracked.add_(1)
        running_mean.mul_(1 - momentum).add_(gmean, alpha=momentum)
        running_var.mul_(1 - momentum).add_(gvar * total / (total - 1), alpha=momentum)
        invstd = torch.rsqrt(gvar + eps)
        ctx.save_for_backward(x, weight, gmean, invstd, total)
        return F.batch_norm(x, gmean, gvar, weight, bias, False, 0.0, eps)

    @staticmethod
    def backward(ctx, dy):
        x, weight, mean, invstd, total = ctx.saved_tensors
        dims, shape, c = (0, 2, 3), (1, -1, 1, 1), x.size(1)
        dy = dy.contiguous()
        xmu = x - mean.view(shape)
        sum_dy = dy.sum(dims)
        sum_dy_xmu = (dy * xmu).sum(dims)
        grad_weight, grad_bias = sum_dy_xmu * invstd, sum_dy.clone()
        both = torch.cat([sum_dy, sum_dy_xmu])
        dist.all_reduce(both)
        mean_dy, mean_dy_xmu = both[:c] / total, both[c:] / total
        grad_x = xmu.mul_((invstd * invstd * mean_dy_xmu).view(shape))
        grad_x = torch.sub(dy, grad_x).sub_(mean_dy.view(shape)).mul_((invstd * weight).view(shape))
        return grad_x, grad_weight, grad_bias, None, None, None, None, None


class CpuSyncBatchNorm(torch.nn.modules.batchnorm._BatchNorm):
    # What a converted SyncBatchNorm becomes: not a SyncBatchNorm, which DDP refuses on CPU.
    def forward(self, x):
        if not self.training:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps)
        return SyncBatchNormFn.apply(x, self.weight, self.bias, self.running_mean, self.running_var,
                                     self.num_batches_tracked, self.eps, self.momentum)


torch.manual_seed(1)
model = getattr(torchvision.models, name)()
if sync_bn:
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    for m in model.modules():
        if isinstance(m, torch.nn.SyncBatchNorm):
            m.__class__ = CpuSyncBatchNorm
model.train()
ddp = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
torch.manual_seed(100 + rank)
x = torch.randn(batch, 3, 224, 224)
y = torch.randint(0, 1000, (batch,))
for _ in range(steps):
    t = time.perf_counter()
    opt.zero_grad()
    loss_fn(ddp(x), y).backward()
    opt.step()
    if rank == 0:
        print(time.perf_counter() - t, flush=True)
dist.destroy_process_group()
"""


def cpu_shares(cpus, ranks):
    """The CPUs of each rank and its thread count, as common/cpu_shares.h's split_cpus."""
    if ranks > len(cpus):
        return [([cpus[k % len(cpus)]], 1) for k in range(ranks)]
    base, extra = divmod(len(cpus), ranks)
    shares, start = [], 0
    for k in range(ranks):
        size = base + (1 if k < extra else 0)
        shares.append((cpus[start:start + size], size))
        start += size
    return shares


def median_after_first(times, what):
    if len(times) < 2:
        raise SystemExit(f"ddp_head_to_head: {what} logged {len(times)} step(s), need at least 2")
    return statistics.median(times[1:])


def layerplan_steps(binary, model, per_rank, nproc, steps, tmp):
    batch = per_rank * nproc
    plan = os.path.join(tmp, f"{model}-{batch}-data.json")
    log = os.path.join(tmp, f"{model}-{batch}.log.jsonl")
    if not os.path.exists(plan):
        subprocess.run([binary, "plan", "--model", model, "--batch", str(batch), "--gpus", str(nproc),
                        "--gpus-per-node", str(nproc), "--mode", "data", "--json", plan], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run([binary, "launch", "--nproc", str(nproc), "--", binary, "train", "--plan", plan, "--data",
                    "synthetic", "--steps", str(steps), "--kernels", "onednn", "--lr", "0.01", "--momentum", "0.9",
                    "--log-every", "1000", "--log-json", log], check=True, stdout=subprocess.DEVNULL)
    times = []
    with open(log) as f:
        for line in f:
            record = json.loads(line)
            if "images_per_s" in record:
                times.append(batch / record["images_per_s"])  # images_per_s is of the global batch
    return times


def ddp_steps(model, per_rank, nproc, steps, sync_bn, tmp):
    store = os.path.join(tmp, f"ddp-store-{next(STORE_NUMBERS)}")  # a fresh FileStore path per run
    shares = cpu_shares(sorted(os.sched_getaffinity(0)), nproc)
    procs = []
    for rank, (cpus, threads) in enumerate(shares):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(nproc), OMP_NUM_THREADS=str(threads))
        if nproc >= 2 and "GOMP_SPINCOUNT" not in env and "OMP_WAIT_POLICY" not in env:
            env["GOMP_SPINCOUNT"] = "1000"  # as layerplan launch sets for its ranks
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
        procs.append(subprocess.Popen(
            ["/usr/bin/python3", "-c", DDP_RANK, model, str(per_rank), str(steps), "1" if sync_bn else "0", store],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, env=env, preexec_fn=lambda c=cpus: os.sched_setaffinity(0, c)))
    out, err0 = procs[0].communicate()
    failed = [(0, procs[0].returncode, err0)] if procs[0].returncode != 0 else []
    for rank, p in enumerate(procs[1:], start=1):
        if failed and p.poll() is None:
            p.kill()  # a peer of a failed rank would wait for it until Gloo's timeout
        _, err = p.communicate()
        if p.returncode != 0 and not failed:
            failed.append((rank, p.returncode, err))
    if failed:
        rank, code, err = failed[0]
        raise SystemExit(f"ddp_head_to_head: DDP rank {rank} of {model} exited with {code}:\n{err[-2000:]}")
    return [float(v) for v in out.split()]


def parse_case(text):
    model, sep, per_rank = text.partition(":")
    if not sep or not model or not per_rank.isdigit() or int(per_rank) < 1:
        raise ValueError(f"--case '{text}': expected MODEL:IMAGES_PER_RANK, e.g. resnet50:16")
    return model, int(per_rank)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nproc", type=int, default=2, help="ranks on each side (default 2)")
    parser.add_argument("--steps", type=int, default=5, help="steps per run; the first is warm-up (default 5)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each side per case, alternating (default 2)")
    parser.add_argument("--layerplan", default="build/layerplan")
    parser.add_argument("--case", action="append",
                        help="model:images_per_rank, repeatable (default resnet50:16, resnet50:32, vgg16:16, vgg16:32)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    try:
        cases = [parse_case(c) for c in (args.case or ["resnet50:16", "resnet50:32", "vgg16:16", "vgg16:32"])]
    except ValueError as e:
        print(f"ddp_head_to_head: {e}", file=sys.stderr)
        return 2
    if args.nproc < 1 or args.steps < 2 or args.rounds < 1:
        print(f"ddp_head_to_head: --nproc {args.nproc}, --rounds {args.rounds}, --steps {args.steps}: "
              "--nproc and --rounds must be at least 1, --steps at least 2", file=sys.stderr)
        return 2
    if not os.access(args.layerplan, os.X_OK):
        print(f"ddp_head_to_head: '{args.layerplan}' is not an executable: build it with scripts/build",
              file=sys.stderr)
        return 2
    binary = os.path.abspath(args.layerplan)
    shares = cpu_shares(sorted(os.sched_getaffinity(0)), args.nproc)
    print(f"{args.nproc} ranks, CPUs {[s[0] for s in shares]}, {shares[0][1]} thread(s) each; {args.steps} steps "
          f"per run (median of steps 2..{args.steps}), {args.rounds} round(s) alternating; "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    print(f"{'model':<10} {'/rank':>5} {'global':>6} {'layerplan s':>11} {'DDP+SyncBN s':>12} {'DDP s':>7} "
          f"{'lp/SyncBN':>9} {'lp/DDP':>7}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, per_rank in cases:
            ours, sync, plain = [], [], []
            for _ in range(args.rounds):
                ours.append(median_after_first(
                    layerplan_steps(binary, model, per_rank, args.nproc, args.steps, tmp), "layerplan"))
                sync.append(median_after_first(
                    ddp_steps(model, per_rank, args.nproc, args.steps, True, tmp), "DDP+SyncBN"))
                plain.append(median_after_first(
                    ddp_steps(model, per_rank, args.nproc, args.steps, False, tmp), "DDP"))
            a, b, c = statistics.median(ours), statistics.median(sync), statistics.median(plain)
            r_sync, r_ddp = a / b, a / c
            print(f"{model:<10} {per_rank:>5} {per_rank * args.nproc:>6} {a:>11.3f} {b:>12.3f} {c:>7.3f} "
                  f"{r_sync:>8.2f}{'*' if r_sync > TARGET_SYNC_BN else ' '} "
                  f"{r_ddp:>6.2f}{'*' if r_ddp > TARGET_DDP else ' '}", flush=True)
            results.append({"model": model, "per_rank": per_rank, "global_batch": per_rank * args.nproc,
                            "layerplan_s": a, "ddp_sync_bn_s": b, "ddp_s": c,
                            "layerplan_rounds_s": ours, "ddp_sync_bn_rounds_s": sync, "ddp_rounds_s": plain,
                            "ratio_sync_bn": r_sync, "ratio_ddp": r_ddp,
                            "target_sync_bn_met": r_sync <= TARGET_SYNC_BN, "target_ddp_met": r_ddp <= TARGET_DDP})
    print(f"targets: layerplan/DDP+SyncBN <= {TARGET_SYNC_BN:.2f}, layerplan/DDP <= {TARGET_DDP:.2f} "
          "(* marks a ratio over its target)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nproc": args.nproc, "threads_per_rank": shares[0][1], "steps": args.steps,
                       "rounds": args.rounds, "date": time.strftime("%Y-%m-%d %H:%M"), "cases": results}, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
