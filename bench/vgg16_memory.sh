#!/usr/bin/env bash
# Peak resident memory per rank of VGG-16 trained on 4 ranks of `layerplan launch`, under
# data parallelism and under the planner's layer-wise plan, both for the same 4 GPUs (the
# Dell XE8640 export in shared/topologies: 4 H100s joined by NVLink) and the same global
# batch. Each rank of `layerplan train` prints its peak RSS (getrusage) at the end; this
# script collects them into one table. Synthetic data, a few steps: memory, not accuracy.
#
# Needs a built layerplan (scripts/build) and about 4 x 3 GiB of memory.
# Usage: bench/vgg16_memory.sh [--batch 16] [--steps 2] [--topology-xml FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=build/layerplan
batch=16 steps=2
xml=../shared/topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml
while [ $# -gt 0 ]; do
  case "$1" in
    --batch) batch="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --topology-xml) xml="$2"; shift 2 ;;
    *) echo "vgg16_memory: unknown flag '$1' (expected --batch, --steps or --topology-xml)" >&2; exit 2 ;;
  esac
done
[ -x "$binary" ] || { echo "vgg16_memory: $binary is missing; run scripts/build" >&2; exit 2; }
[ -f "$xml" ] || { echo "vgg16_memory: no topology file '$xml'" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mode in data layerwise; do
  "$binary" plan --config none --topology-xml "$xml" --gpu-ids 0,1,2,3 --model vgg16 --batch "$batch" --mode "$mode" \
    --json "$work/$mode.json" >"$work/$mode-plan.txt"
  echo "== VGG-16, batch $batch, $mode plan on 4 ranks, $steps steps"
  "$binary" launch --nproc 4 -- "$binary" train --plan "$work/$mode.json" --data synthetic --steps "$steps" \
    --log-every 1 | tee "$work/$mode.txt"
done

echo
echo "peak resident memory per rank (MiB), VGG-16 batch $batch on 4 ranks:"
printf '%-10s %10s %10s %10s %10s %10s\n' plan "rank 0" "rank 1" "rank 2" "rank 3" total
for mode in data layerwise; do
  row=()
  total=0
  for r in 0 1 2 3; do
    mib=$(sed -nE "s/^\[rank $r\] peak memory ([0-9.]+) MiB$/\1/p" "$work/$mode.txt")
    [ -n "$mib" ] || { echo "vgg16_memory: rank $r of the $mode run printed no peak memory" >&2; exit 1; }
    row+=("$mib")
    total=$(python3 -c "print(round($total + $mib, 1))")
  done
  printf '%-10s %10s %10s %10s %10s %10s\n' "$mode" "${row[@]}" "$total"
done
