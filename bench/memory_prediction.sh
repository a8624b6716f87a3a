#!/usr/bin/env bash
# The planner's predicted peak memory per device (planner/memory_model.h) against the peak
# resident memory each rank of `layerplan train` measures (getrusage), on the CPU runtime.
#
# For each case the plan is made for the 4 H100s of the Dell XE8640 export (as
# bench/vgg16_memory.sh does) or for one GPU, written as JSON, and trained for a few steps on
# synthetic data; each rank prints its peak resident memory. A rank's prediction is
#   the plan file's predicted.device_peak_memory_bytes[rank]  (what the executor allocates)
#   + the whole global batch of images, which every rank assembles (runtime/training)
#   + the process's own memory without a model: a LeNet-5 run at batch 4 on as many ranks,
#     less its own prediction and batch (binary, libraries, oneDNN, Gloo).
#
# Needs a built layerplan (scripts/build). The default cases take about 4 x 2.5 GiB of memory
# and minutes of CPU.
# Usage: bench/memory_prediction.sh [--steps 2] [--layerplan build/layerplan]
#                                   [--cases "1:alexnet:32:layerwise 4:vgg16:16:data ..."]
# A case is RANKS:MODEL:BATCH:MODE (MODE as `layerplan plan --mode`; with 1 rank, the 1-GPU plan).
set -euo pipefail
cd "$(dirname "$0")/.."
binary=build/layerplan
steps=2
cases="1:alexnet:32:layerwise 1:resnet50:8:layerwise 4:vgg16:16:data 4:vgg16:16:layerwise 4:resnet50:16:model"
xml=tests/data/topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --cases) cases="$2"; shift 2 ;;
    --layerplan) binary="$2"; shift 2 ;;
    *) echo "memory_prediction: unknown flag '$1' (expected --steps, --layerplan or --cases)" >&2; exit 2 ;;
  esac
done
[ -x "$binary" ] || { echo "memory_prediction: $binary is missing; run scripts/build" >&2; exit 2; }
for c in $cases; do
  [[ "$c" =~ ^[1-4]:[a-z0-9_]+:[0-9]+:(layerwise|auto|data|model|owt)$ ]] ||
    { echo "memory_prediction: case '$c': expected RANKS:MODEL:BATCH:MODE, 1 to 4 ranks" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# plan RANKS MODEL BATCH MODE FILE: a plan for RANKS GPUs (1: a flag-described H100).
plan() {
  local ranks=$1 model=$2 batch=$3 mode=$4 file=$5
  if [ "$ranks" = 1 ]; then
    "$binary" plan --model "$model" --gpus 1 --gpu h100 --batch "$batch" --json "$file" >/dev/null
  else
    local ids
    ids=$(seq -s, 0 $((ranks - 1)))
    "$binary" plan --config none --topology-xml "$xml" --gpu-ids "$ids" --model "$model" --batch "$batch" --mode "$mode" \
      --json "$file" >/dev/null
  fi
}

# run RANKS FILE OUT: trains the plan and leaves each rank's peak MiB, one a line, in OUT.
run() {
  local ranks=$1 file=$2 out=$3
  if [ "$ranks" = 1 ]; then
    "$binary" train --plan "$file" --data synthetic --steps "$steps" --log-every 1000 >"$out.log"
    sed -nE 's/^peak memory ([0-9.]+) MiB$/\1/p' "$out.log" >"$out"
  else
    "$binary" launch --nproc "$ranks" -- "$binary" train --plan "$file" --data synthetic --steps "$steps" \
      --log-every 1000 >"$out.log"
    for r in $(seq 0 $((ranks - 1))); do
      sed -nE "s/^\[rank $r\] peak memory ([0-9.]+) MiB$/\1/p" "$out.log"
    done >"$out"
  fi
  [ "$(wc -l <"$out")" = "$ranks" ] || { echo "memory_prediction: a rank printed no peak memory" >&2; exit 1; }
}

# What every rank holds besides the plan: device prediction and the batch out of LeNet-5's run.
declare -A base
for ranks in $(for c in $cases; do echo "${c%%:*}"; done | sort -u); do
  plan "$ranks" lenet5 4 data "$work/lenet-$ranks.json"
  run "$ranks" "$work/lenet-$ranks.json" "$work/lenet-$ranks.mib"
  base[$ranks]=$(python3 - "$work/lenet-$ranks.json" "$work/lenet-$ranks.mib" <<'EOF'
import json, sys
plan = json.load(open(sys.argv[1]))
measured = [float(x) for x in open(sys.argv[2])]
predicted = plan["predicted"]["device_peak_memory_bytes"]
batch_bytes = plan["batch"] * 1 * 32 * 32 * 4
print(round(max(m - (p + batch_bytes) / 2**20 for m, p in zip(measured, predicted)), 1))
EOF
)
done

echo "process memory without a model (LeNet-5 run, MiB): $(for r in "${!base[@]}"; do printf '%s ranks %s  ' "$r" "${base[$r]}"; done)"
printf '%-10s %6s %6s %-10s %5s %12s %12s %8s\n' model batch ranks plan rank "predicted MiB" "measured MiB" error
for c in $cases; do
  IFS=: read -r ranks model batch mode <<<"$c"
  plan "$ranks" "$model" "$batch" "$mode" "$work/case.json"
  run "$ranks" "$work/case.json" "$work/case.mib"
  python3 - "$work/case.json" "$work/case.mib" "${base[$ranks]}" "$model" "$batch" "$ranks" "$mode" <<'EOF'
import json, sys
plan = json.load(open(sys.argv[1]))
measured = [float(x) for x in open(sys.argv[2])]
base = float(sys.argv[3])
model, batch, ranks, mode = sys.argv[4:8]
first = plan["layers"][0]["output_shape"]
batch_mib = first[0] * first[1] * first[2] * first[3] * 4 / 2**20
for r, m in enumerate(measured):
    device = plan["predicted"]["device_peak_memory_bytes"][r] / 2**20
    p = device + batch_mib + base
    print(f"{model:<10} {batch:>6} {ranks:>6} {mode:<10} {r:>5} {p:>12.1f} {m:>12.1f} {100 * (p - m) / m:>+7.1f}%")
EOF
done
