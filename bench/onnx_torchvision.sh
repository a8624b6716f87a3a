#!/usr/bin/env bash
# ONNX exports of torchvision models read by layerplan (docs/BENCHMARKS.md, "ONNX import"):
# parameters against torchvision's, multiply-adds against the built-in models', and the
# time of a plan on 16 GPUs. Needs python3-torch and python3-torchvision from Debian
# (about 1 GB; not in scripts/setup, not run by CI):
#   apt-get install python3-torch python3-torchvision
#   [OPSET=18] [ONNX_DIR=DIR] bench/onnx_torchvision.sh [BUILD_DIR] [MODEL...]
# OPSET: the opset exported (default 14). ONNX_DIR: keep the exports there (and read those
# already there again, unexported); by default they go to a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
[ -x "$build/layerplan" ] || { echo "onnx_torchvision: $build/layerplan missing: build it first" >&2; exit 2; }
/usr/bin/python3 -c "import torch, torchvision" 2>/dev/null ||
  { echo "onnx_torchvision: needs python3-torch and python3-torchvision (apt-get install ...)" >&2; exit 2; }
reuse=()
if [ -n "${ONNX_DIR:-}" ]; then
  out=$ONNX_DIR
  reuse=(--reuse)
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
/usr/bin/python3 bench/onnx_torchvision.py --opset "${OPSET:-14}" "${reuse[@]}" "$build" "$out" "$@"
