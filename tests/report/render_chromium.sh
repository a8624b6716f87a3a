#!/usr/bin/env bash
# Renders the HTML report of VGG-16 on 16 GPUs, of Inception-v3 on 64 GPUs and of ResNet-50
# on one node of 4 H100 (where data parallelism is chosen over the searched plan) in headless
# Chromium (Debian's `chromium`, which scripts/setup installs) and checks that each
# rendered: Chromium exits 0, the PNG has the window's size and is not blank
# (tests/report/png_check.py), and Chromium's log holds no console message and no failed
# load (the page has no script and fetches nothing). The reports and PNGs stay in
# BUILD/report-chromium/ as CI artifacts. CTest `report_chromium` (label report_chromium).
# Usage: render_chromium.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out="$build/report-chromium"
mkdir -p "$out"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "report_chromium: no chromium on PATH (scripts/setup installs Debian's chromium)" >&2
  exit 1
fi
width=1400
height=3000

# render NAME: BUILD/report-chromium/NAME.html -> NAME.png, then the checks.
render() {
  local name=$1 profile
  profile=$(mktemp -d)
  local start end
  start=$(date +%s%N)
  if ! timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
      --user-data-dir="$profile" --enable-logging=stderr --v=0 --window-size="$width,$height" \
      --screenshot="$out/$name.png" "file://$out/$name.html" >"$out/$name.chromium.log" 2>&1; then
    rm -rf "$profile"
    echo "report_chromium: chromium failed on $name.html; its log:" >&2
    cat "$out/$name.chromium.log" >&2
    exit 1
  fi
  end=$(date +%s%N)
  rm -rf "$profile"
  # Console messages (any level: the page has no script) and failed loads.
  if grep -E "CONSOLE|net::ERR_|Failed to load|Uncaught" "$out/$name.chromium.log"; then
    echo "report_chromium: $name.html logged the lines above" >&2
    exit 1
  fi
  python3 "$here/png_check.py" "$out/$name.png" "$width" "$height"
  echo "$name: $(stat -c %s "$out/$name.html") bytes of HTML, chromium $(((end - start) / 1000000)) ms"
}

"$build/layerplan" plan --model vgg16 --gpus 16 --report "$out/vgg16-16.html" >/dev/null
"$build/layerplan" plan --model inception_v3 --gpus 64 --report "$out/inception_v3-64.html" >/dev/null
"$build/layerplan" plan --model resnet50 --gpus 4 --gpu h100 --report "$out/resnet50-4-h100.html" >/dev/null
render vgg16-16
render inception_v3-64
render resnet50-4-h100
