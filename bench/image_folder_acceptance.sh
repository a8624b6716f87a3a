#!/usr/bin/env bash
# Issue 33's image-folder target: LeNet-5 trained on Fashion-MNIST written as an image folder
# (all 60,000 training images and the 10,000 test images as PNG and JPEG files in class
# folders, by the tests' layerplan_image_folder_writer) for 2 epochs on 2 ranks of
# `layerplan launch`, under torchvision's training transforms (RandomResizedCrop, here with
# its default scale (0.08, 1), horizontal flip, normalise) and its evaluation transforms
# (Resize, CenterCrop). Prints the validation accuracy after each epoch and checks that the
# last reaches at least 80 %. Exit 0 when it does, 1 otherwise, 2 for bad usage.
#
# The defaults (AdamW, lr 0.002, cosine schedule, batch 32) are what reached the target in
# docs/BENCHMARKS.md ("Image folders: accuracy"); SGD at lr 0.02 without a schedule did not.
#
# Needs a built tree (scripts/build: layerplan and build/tests/layerplan_image_folder_writer)
# and Debian's dataset-fashion-mnist (scripts/setup). About 280 MB of files in the folder.
# Usage: bench/image_folder_acceptance.sh [--batch 32] [--keep DIR] [TRAIN FLAGS...]
#   Flags other than --batch and --keep replace the default training flags.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=build/layerplan writer=build/tests/layerplan_image_folder_writer
batch=32 keep=""
train_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --batch | --keep)
      if [ $# -lt 2 ]; then echo "image_folder_acceptance: $1 needs a value" >&2; exit 2; fi
      [ "$1" = --batch ] && batch=$2 || keep=$2
      shift 2 ;;
    *) train_flags+=("$1"); shift ;;
  esac
done
if ! [[ $batch =~ ^[0-9]+$ ]] || [ "$batch" -lt 2 ] || [ $((batch % 2)) -ne 0 ]; then
  echo "image_folder_acceptance: --batch '$batch': expected an even number, 2 or more (2 ranks)" >&2
  exit 2
fi
[ ${#train_flags[@]} -gt 0 ] || train_flags=(--optimizer adamw --lr 0.002 --lr-schedule cosine)
for f in "$binary" "$writer"; do
  [ -x "$f" ] || { echo "image_folder_acceptance: $f is not built (run scripts/build)" >&2; exit 2; }
done
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
[ -d "$work/train" ] || "$writer" "$work" 60000 10000
"$binary" plan --model lenet5 --gpus 2 --batch "$batch" --json "$work/plan.json" >/dev/null
start=$SECONDS
"$binary" launch --nproc 2 -- "$binary" train --plan "$work/plan.json" --data "imagefolder:$work/train" \
  --val-data "imagefolder:$work/val" --epochs 2 "${train_flags[@]}" >"$work/train.txt" 2>&1 || {
  cat "$work/train.txt" >&2
  exit 1
}
accuracies=$(grep -o 'validation accuracy [0-9.]*' "$work/train.txt" | awk '{print $3}')
echo "batch $batch, ${train_flags[*]}: validation accuracy after each epoch: ${accuracies//$'\n'/ } % ($((SECONDS - start)) s)"
last=$(tail -n1 <<<"$accuracies")
if awk -v a="$last" 'BEGIN { exit !(a >= 80) }'; then
  echo "ok: $last % >= 80 %"
else
  echo "not ok: $last % < 80 %"
  exit 1
fi
