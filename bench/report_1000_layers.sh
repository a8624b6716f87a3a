#!/usr/bin/env bash
# The HTML report of a generated 1,000-layer model: its size (target: under 5 MB) and the
# time headless Chromium takes to render it to a PNG (target: under 5 s), next to the time
# it takes for an empty page (Chromium's own start) on the same machine. The model is 100
# Inception-like blocks (three branches and a concat, 10 layers each) on a 32x32 input.
#
# Needs a built layerplan (scripts/build) and Debian's chromium (scripts/setup).
# Usage: bench/report_1000_layers.sh [--gpus 64] [--blocks 100] [--budget SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=build/layerplan
gpus=64 blocks=100 budget=30
while [ $# -gt 0 ]; do
  case "$1" in
    --gpus) gpus="$2"; shift 2 ;;
    --blocks) blocks="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    *) echo "report_1000_layers: unknown flag '$1' (expected --gpus, --blocks or --budget)" >&2; exit 2 ;;
  esac
done
[ -x "$binary" ] || { echo "report_1000_layers: $binary is missing; run scripts/build" >&2; exit 2; }
command -v chromium >/dev/null || { echo "report_1000_layers: no chromium (scripts/setup)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$blocks" >"$work/blocks.json" <<'PY'
import json, sys
blocks = int(sys.argv[1])
layers = [{"name": "stem", "kind": "conv2d", "out_channels": 48, "kernel": 3, "padding": 1},
          {"name": "stem_relu", "kind": "relu"}]
previous = "stem_relu"
for b in range(blocks):
    p = f"b{b}_"
    layers += [
        {"name": p + "a", "kind": "conv2d", "input": previous, "out_channels": 16, "kernel": 1},
        {"name": p + "a_relu", "kind": "relu"},
        {"name": p + "b1", "kind": "conv2d", "input": previous, "out_channels": 16, "kernel": 1},
        {"name": p + "b1_relu", "kind": "relu"},
        {"name": p + "b2", "kind": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1},
        {"name": p + "b2_relu", "kind": "relu"},
        {"name": p + "c_pool", "kind": "max_pool", "input": previous, "kernel": 3, "stride": 1, "padding": 1},
        {"name": p + "c", "kind": "conv2d", "out_channels": 16, "kernel": 1},
        {"name": p + "c_relu", "kind": "relu"},
        {"name": p + "cat", "kind": "concat", "inputs": [p + "a_relu", p + "b2_relu", p + "c_relu"]},
    ]
    previous = p + "cat"
layers += [{"name": "gap", "kind": "global_avg_pool"}, {"name": "flat", "kind": "flatten"},
           {"name": "fc", "kind": "fully_connected", "out_features": 10},
           {"name": "loss", "kind": "softmax_cross_entropy"}]
print(json.dumps({"format": "layerplan-model", "version": 1, "name": "blocks",
                  "input": {"channels": 3, "height": 32, "width": 32}, "layers": layers}))
PY
start=$(date +%s%N)
"$binary" plan --model "$work/blocks.json" --gpus "$gpus" --time-budget "$budget" --report "$work/blocks.html" \
  >"$work/plan.txt"
plan_ms=$(( ($(date +%s%N) - start) / 1000000 ))
layers=$(grep -c '<g class="layer"' "$work/blocks.html" || true)
echo '<html xmlns="http://www.w3.org/1999/xhtml"><body></body></html>' >"$work/empty.html"

# render FILE: prints the milliseconds headless Chromium took to write its screenshot.
render() {
  local profile start
  profile=$(mktemp -d)
  start=$(date +%s%N)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$profile" --window-size=1400,3000 --screenshot="$work/shot.png" "file://$1" >/dev/null 2>&1
  echo $(( ($(date +%s%N) - start) / 1000000 ))
  rm -rf "$profile"
}
empty_ms=$(render "$work/empty.html")
report_ms=$(render "$work/blocks.html")
grep -E "^layer-wise|^search" "$work/plan.txt" || true
echo "layers drawn: $layers on $gpus GPUs"
echo "plan + report: $plan_ms ms"
echo "report: $(stat -c %s "$work/blocks.html") bytes"
echo "chromium, empty page: $empty_ms ms; the report: $report_ms ms"
