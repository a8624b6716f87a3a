#!/usr/bin/env bash
# scripts/check-layering can fail: on a copy of the tree it passes, then fails naming the
# file, the line and the rule for a planted forbidden include (model/ including the
# planner) and for a planted forbidden link (runtime/kernels linking the planner).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for folder in docs common model topology planner job launcher runtime predict spank_plugin cli; do
  [ -d "$src/$folder" ] && cp -r "$src/$folder" "$work/$folder"
done
check() { "$src/scripts/check-layering" --root "$work" 2>&1; }
fail() { echo "FAIL: $1"; exit 1; }

check >/dev/null || fail "the unchanged copy has violations: $(check)"

cp "$work/model/geometry.cc" "$work/geometry.cc.orig"
echo '#include "planner/planner.h"' >>"$work/model/geometry.cc"
if out=$(check); then fail "model/ including planner/ passed"; fi
line=$(wc -l <"$work/model/geometry.cc")
grep -qF "model/geometry.cc:$line: includes \"planner/planner.h\" (planner); model may use common" <<<"$out" ||
  fail "the planted include was not named: $out"
echo "planted include caught: $(head -1 <<<"$out")"
mv "$work/geometry.cc.orig" "$work/model/geometry.cc"

echo 'target_link_libraries(layerplan_kernels PRIVATE layerplan_planner)' >>"$work/runtime/kernels/CMakeLists.txt"
if out=$(check); then fail "runtime/kernels linking the planner passed"; fi
grep -qF "runtime/kernels/CMakeLists.txt:" <<<"$out" && grep -qF "names layerplan_planner (planner); runtime/kernels may use common, model" <<<"$out" ||
  fail "the planted link was not named: $out"
echo "planted link caught: $(head -1 <<<"$out")"
