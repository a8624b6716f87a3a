#!/usr/bin/env bash
# The calibration benchmarks still run end to end, on tiny cases: bench/gloo_link_bench on
# 2 and 4 ranks writes the link figures (by compute gap and message size, exchanges and
# one-way messages; on 4, with all other ranks at once and into one from all) that
# `layerplan predict --link` reads;
# bench/predicted_vs_measured.sh prints a row with numbers per case and its summary;
# bench/profile_against_prediction.sh prints its table; bad arguments exit 2 with a message.
# The figures themselves are benchmarks (docs/BENCHMARKS.md), not checked here.
#   tests/bench/scripts_smoke.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: scripts_smoke.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
layerplan=$build/layerplan link_bench=$build/bench/gloo_link_bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
ok() { echo "ok - $1"; }
fail() { echo "not ok - $1"; status=1; }

for n in 2 4; do
  if "$layerplan" launch --nproc "$n" -- "$link_bench" --json "$work/link-$n.json" >"$work/link-$n.txt" 2>&1 &&
     python3 - "$work/link-$n.json" "$n" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
gaps = [p["gap_ms"] for p in j["latency_by_gap"]]
assert gaps == [0, 0.1, 0.5, 2, 10], gaps
assert all(p["latency_us"] > 0 for p in j["latency_by_gap"])
assert j["bandwidth_gbytes"] > 0 and j["latency_us"] > 0 and j["ping_pong_latency_us"] > 0
sizes = j["latency_by_size"]
assert [s["bytes"] for s in sizes] == [256, 16384, 262144, 4194304], sizes
one_way = j["one_way_by_size"]
assert [s["bytes"] for s in one_way] == [256, 16384, 262144, 4194304], one_way
# With two ranks the other ranks are the pair's: no lists by peers.
peers = [j[k] for k in ("all_peers_by_size", "fan_in_by_size") if k in j]
assert len(peers) == (2 if n > 2 else 0) and j.get("all_peers", n - 1) == n - 1, sorted(j)
for s in sizes + one_way + sum(peers, []):
    assert [p["gap_ms"] for p in s["latency_by_gap"]] == gaps, s
    assert all(p["latency_us"] >= 0 for p in s["latency_by_gap"]), s
PY
  then ok "gloo_link_bench on $n ranks writes latency by gap and message size, exchanges and one way$([ "$n" -gt 2 ] && echo ", with all peers and into one"), and a bandwidth"
  else fail "gloo_link_bench on $n ranks: $(tail -3 "$work/link-$n.txt")"; fi
done
"$layerplan" plan --model lenet5 --batch 8 --cluster "$root/bench/cpu_like_4_devices.toml" --gpus 2 \
  --gpus-per-node 2 --json "$work/plan.json" >/dev/null 2>&1
if "$layerplan" launch --nproc 2 -- "$layerplan" predict --plan "$work/plan.json" --steps 2 --link "$work/link-2.json" \
     >"$work/predict.txt" 2>&1; then ok "layerplan predict reads the link bench's JSON"
else fail "layerplan predict --link: $(tail -3 "$work/predict.txt")"; fi
"$layerplan" plan --model lenet5 --batch 8 --cluster "$root/bench/cpu_like_4_devices.toml" --gpus 4 \
  --gpus-per-node 4 --json "$work/plan-4.json" >/dev/null 2>&1
if "$layerplan" launch --nproc 4 -- "$layerplan" predict --plan "$work/plan-4.json" --steps 2 \
     --link "$work/link-4.json" >"$work/predict-4.txt" 2>&1; then ok "layerplan predict reads the 4-rank link's lists by peers"
else fail "layerplan predict --link (4 ranks): $(tail -3 "$work/predict-4.txt")"; fi

if bash "$root/bench/memory_prediction.sh" --layerplan "$layerplan" --steps 1 --cases "1:lenet5:8:layerwise 2:lenet5:8:data" \
     >"$work/memory.txt" 2>&1 &&
   [ "$(grep -cE '^lenet5 +8 +[12] +(layerwise|data) +[01] +[0-9.]+ +[0-9.]+ +[+-][0-9.]+%$' "$work/memory.txt")" = 3 ]; then
  ok "memory_prediction.sh: predicted against measured peak memory, a row per rank"
else fail "memory_prediction.sh printed: $(cat "$work/memory.txt")"; fi
if bash "$root/bench/memory_prediction.sh" --layerplan "$layerplan" --cases "9:lenet5:8:data" >/dev/null 2>&1; then
  fail "memory_prediction.sh accepted 9 ranks"
else ok "memory_prediction.sh refuses a malformed case"; fi

pvm=(bash "$root/bench/predicted_vs_measured.sh" --layerplan "$layerplan" --link-bench "$link_bench")
if "${pvm[@]}" --ranks "1 2" --keep "$work/pvm" lenet5:8:3:2 >"$work/pvm.txt" 2>&1; then
  rows=$(grep -cE '^lenet5 +8 +[12] .* [0-9]+\.[0-9]{4} +[0-9]+\.[0-9]{4} +[+-][0-9]+\.[0-9]%  [+-][0-9]+ [+-][0-9]+$' "$work/pvm.txt")
  if [ "$rows" = 2 ] && grep -qE '^  lenet5 +[0-9.]+%  (OK|over)$' "$work/pvm.txt" && [ -e "$work/pvm/lenet5-2.2.train.jsonl" ]; then
    ok "predicted_vs_measured.sh: a row per rank count with each repetition's error, and the summary"
  else fail "predicted_vs_measured.sh printed: $(cat "$work/pvm.txt")"; fi
else fail "predicted_vs_measured.sh failed: $(tail -5 "$work/pvm.txt")"; fi

profile=(bash "$root/bench/profile_against_prediction.sh" --layerplan "$layerplan" --link-bench "$link_bench")
if "${profile[@]}" lenet5:8:3 2 >"$work/profile.txt" 2>&1 &&
   grep -qE '^conv1( +[0-9.]+){6}$' "$work/profile.txt" &&
   grep -qE '^weight rings +[0-9.]+( +[0-9.]+){2}$' "$work/profile.txt" &&
   grep -qE '^step .* error [+-][0-9.]+ %$' "$work/profile.txt"; then
  ok "profile_against_prediction.sh: per-layer compute and communication of both ranks, the rings, and the step"
else fail "profile_against_prediction.sh printed: $(cat "$work/profile.txt")"; fi

expect_usage() {  # DESCRIPTION MESSAGE COMMAND...: exit 2 and MESSAGE on stderr, nothing on stdout
  local what=$1 message=$2; shift 2
  local out err code
  out=$("$@" 2>"$work/err"); code=$?
  err=$(cat "$work/err")
  if [ "$code" = 2 ] && [ -z "$out" ] && grep -qF -- "$message" <<<"$err"; then ok "$what: exit 2, '$message'"
  else fail "$what: exit $code, stdout '$out', stderr '$err'"; fi
}
expect_usage "predicted_vs_measured.sh --repeat 0" "--repeat 0: expected 1 or more" "${pvm[@]}" --repeat 0
expect_usage "predicted_vs_measured.sh lenet5:8:3:0" "case 'lenet5:8:3:0': expected MODEL:BATCH[:STEPS[:REPEAT]]" \
  "${pvm[@]}" lenet5:8:3:0
expect_usage "predicted_vs_measured.sh --link-compute" "--link-compute 'gpu': expected one or team" \
  "${pvm[@]}" --link-compute gpu
expect_usage "predicted_vs_measured.sh unknown flag" "unknown flag '--fast'" "${pvm[@]}" --fast
expect_usage "profile_against_prediction.sh without a rank count" "expected MODEL:BATCH:STEPS N" \
  "${profile[@]}" lenet5:8:3
expect_usage "profile_against_prediction.sh bad steps" "'lenet5:8:1'" "${profile[@]}" lenet5:8:1 2
expect_usage "gloo_link_bench --compute" "--compute 'gpu': expected one or team" "$link_bench" --compute gpu
exit $status
