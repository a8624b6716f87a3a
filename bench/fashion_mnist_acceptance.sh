#!/usr/bin/env bash
# Trains LeNet-5 on Fashion-MNIST twice with the same flags and seed: in one process
# (a 1-device plan) and on 4 ranks of `layerplan launch` with the planner's layer-wise plan
# for 4 devices. The 4 devices are described by bench/cpu_like_4_devices.toml, each about
# as fast as one core here: on real GPU figures LeNet-5 at batch 32 is too small to be worth
# splitting and the plan keeps every layer on one device. On these, with the search pricing
# sync by parameter servers (--sync ps, the paper's model; the default bucket all-reduces
# overlapping the backward make plain data parallelism the best plan) and the searched plan
# written (--mode layerwise), it splits the convolutions in samples, the first two fully
# connected layers in channels, and keeps the last on rank 0, so boxes move between all
# ranks. (The plan of the run in docs/BENCHMARKS.md, made before the timeline, also split
# the input in width and conv1 in channels.)
# Prints both test accuracies after the last epoch and checks the issue's targets: the
# 4-rank run reaches at least 88% and is within 0.3 points of the 1-process run.
# Exit 0 when both hold, 1 otherwise.
#
# The defaults (batch 32, lr 0.02 on a cosine schedule, standardised inputs, momentum 0.9)
# are the best of the settings tried in docs/BENCHMARKS.md ("Fashion-MNIST").
#
# Needs a built layerplan (scripts/build) and Debian's dataset-fashion-mnist (scripts/setup).
# Usage: bench/fashion_mnist_acceptance.sh [--epochs 2] [--batch 32] [--lr 0.02]
#          [--lr-schedule cosine|constant] [--no-normalize] [--keep DIR]
#   Any flag not listed above goes to both `layerplan train` runs.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=build/layerplan
epochs=2 batch=32 lr=0.02 schedule=cosine normalize=(--normalize) keep=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --epochs) epochs="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --lr) lr="$2"; shift 2 ;;
    --lr-schedule) schedule="$2"; shift 2 ;;
    --no-normalize) normalize=(); shift ;;
    --keep) keep="$2"; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
[ -x "$binary" ] || { echo "fashion_mnist_acceptance: $binary is missing; run scripts/build" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$keep" ]; then mkdir -p "$keep"; work_out="$keep"; else work_out="$work"; fi

"$binary" plan --model lenet5 --batch "$batch" --gpus 1 --gpus-per-node 1 --json "$work/one.json" >/dev/null
"$binary" plan --model lenet5 --batch "$batch" --cluster bench/cpu_like_4_devices.toml \
  --sync ps --mode layerwise --json "$work/four.json" \
  >"$work_out/four-plan.txt"

train=(train --data fashion-mnist --epochs "$epochs" --lr "$lr" --lr-schedule "$schedule" --momentum 0.9
       --seed 1 --log-every 400 ${normalize[@]+"${normalize[@]}"} ${extra[@]+"${extra[@]}"})
echo "== 1 process: layerplan ${train[*]}"
start=$(date +%s)
"$binary" "${train[@]}" --plan "$work/one.json" --log-json "$work_out/one.jsonl" | tee "$work_out/one.txt"
echo "   $(( $(date +%s) - start )) s"
echo "== 4 ranks, layer-wise plan:"
sed -n '3,18p' "$work_out/four-plan.txt" | cut -c1-90
start=$(date +%s)
"$binary" launch --nproc 4 -- "$binary" "${train[@]}" --plan "$work/four.json" --log-json "$work_out/four.jsonl" |
  tee "$work_out/four.txt"
echo "   $(( $(date +%s) - start )) s"

# The last test_accuracy line of each JSON log (rank 0 writes it after every epoch).
last_accuracy() { grep '"test_accuracy"' "$1" | tail -1 | sed -E 's/.*"test_accuracy":([0-9.eE+-]+).*/\1/'; }
one=$(last_accuracy "$work_out/one.jsonl")
four=$(last_accuracy "$work_out/four.jsonl")
python3 - "$one" "$four" <<'EOF'
import sys
one, four = (100 * float(a) for a in sys.argv[1:3])
ok = four >= 88.0 and abs(four - one) <= 0.3
print(f"test accuracy: 1 process {one:.2f}%, 4 ranks layer-wise {four:.2f}%, "
      f"difference {four - one:+.2f} points -> {'PASS' if ok else 'FAIL'} (target >= 88%, within 0.3)")
sys.exit(0 if ok else 1)
EOF
