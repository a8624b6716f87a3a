#!/usr/bin/env bash
# Where a prediction and a training run of one plan part ways, layer by layer: the planner's
# layer-wise plan for MODEL on N devices of bench/cpu_like_4_devices.toml (as
# bench/predicted_vs_measured.sh plans it) is predicted with `layerplan predict --json` and
# trained with `layerplan train --profile`, both under `layerplan launch --nproc N`; the table
# puts each layer's predicted compute (its slowest device) beside each rank's compute in
# training, and its priced messages (the moves of its input edges and its batch-norm
# statistics) beside each rank's time in those transport calls (waiting for the other ranks
# included), the weight gradients' rings and the loss likewise; then the same for the whole
# step.
#
# Usage: bench/profile_against_prediction.sh [--layerplan PATH] [--link-bench PATH]
#          [--link-compute one|team] [--keep DIR] MODEL:BATCH:STEPS N
#   e.g. bench/profile_against_prediction.sh lenet5:32:400 4
# Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/calibration_steps.sh
binary=build/layerplan link_bench=build/bench/gloo_link_bench link_compute=one keep=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --layerplan) binary="$2"; shift 2 ;;
    --link-bench) link_bench="$2"; shift 2 ;;
    --link-compute) link_compute="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -*) echo "profile_against_prediction: unknown flag '$1' (expected --layerplan, --link-bench, --link-compute or --keep)" >&2
        exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
usage="expected MODEL:BATCH:STEPS N, e.g. lenet5:32:400 4"
[ ${#args[@]} -eq 2 ] || { echo "profile_against_prediction: $usage" >&2; exit 2; }
IFS=: read -r model batch steps <<<"${args[0]}"
n=${args[1]}
[ -n "$model" ] && [ "$batch" -ge 1 ] 2>/dev/null && [ "$steps" -ge 2 ] 2>/dev/null ||
  { echo "profile_against_prediction: '${args[0]}': $usage (BATCH 1 or more, STEPS 2 or more)" >&2; exit 2; }
[ "$n" -ge 1 ] 2>/dev/null || { echo "profile_against_prediction: N '$n': expected a rank count, 1 or more" >&2; exit 2; }
check_calibration_tools profile_against_prediction
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="${keep:-$work}"
mkdir -p "$out"

measure_link "$(link_ranks "$n")" "$out/link.json" >"$out/link.txt"
plan_case "$model" "$batch" "$n" "$out/plan.json" >"$out/plan.txt"
"$binary" launch --nproc "$n" -- "$binary" predict --plan "$out/plan.json" --steps "$steps" --link "$out/link.json" \
  --json "$out/predict.json" >"$out/predict.txt"
"$binary" launch --nproc "$n" -- "$binary" train --plan "$out/plan.json" --data synthetic --steps "$steps" \
  --log-every 1000 --log-json "$out/train.jsonl" --profile "$out/profile.json" >"$out/train.txt" 2>&1
python3 - "$out" "$n" "$batch" <<'PY'
import json, statistics, sys
out, n, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pred = json.load(open(f"{out}/predict.json"))
ranks = [json.load(open(f"{out}/profile.json.rank{r}")) for r in range(n)]  # one file per rank under launch
ms = lambda s: f"{1e3 * s:9.3f}"
print(f"{'layer':<22} {'predicted':>9} " + " ".join(f"{'rank ' + str(r):>9}" for r in range(n))
      + f"   {'priced':>9} " + " ".join(f"{'rank ' + str(r):>9}" for r in range(n)) + "   ms a step")
print(f"{'':<22} {'compute':>9} {'':>{10 * n - 1}}   {'messages':>9}")
for i, layer in enumerate(pred["layers"]):
    trained = [r["layers"][i]["compute_s"] for r in ranks]
    priced = layer["transfer_s"] + layer["sync_s"]
    waited = [r["layers"][i]["moves"]["seconds"] + r["layers"][i]["statistics_reductions"]["seconds"] for r in ranks]
    if layer["compute_s"] == 0 and priced == 0 and not any(trained) and not any(waited):
        continue
    print(f"{layer['layer'][:22]:<22} {ms(layer['compute_s'])} " + " ".join(ms(t) for t in trained)
          + f"   {ms(priced)} " + " ".join(ms(t) for t in waited))
# The weight gradients' rings and the loss, which are no layer's, in the messages columns.
for name, priced, kind in (("weight rings", "weight_sync_s", "weight_reductions"), ("loss", "loss_sync_s", "loss_reductions")):
    print(f"{name:<22} {'':>{10 * n + 9}}   {ms(pred[priced])} " + " ".join(ms(r["communication"][kind]["seconds"]) for r in ranks))
print(f"{'compute':<22} {ms(pred['compute_s'])} " + " ".join(ms(r['compute_s']) for r in ranks))
comm = lambda r: sum(k["seconds"] for k in r["communication"].values())
calls = lambda r: sum(k["calls"] for k in r["communication"].values())
print(f"{'communication':<22} {ms(pred['transfer_s'] + pred['sync_s'])} " + " ".join(ms(comm(r)) for r in ranks)
      + f"   ({pred['messages']:.0f} messages priced; " + ", ".join(f"{calls(r):.0f}" for r in ranks) + " calls)")
print(f"{'overhead + data':<22} {ms(pred['overhead_s'] + pred['data_s'])}")
steps = [json.loads(l) for l in open(f"{out}/train.jsonl") if '"images_per_s"' in l]
measured = statistics.median(batch / s["images_per_s"] for s in steps[1:])
print(f"{'step':<22} {ms(pred['predicted_step_s'])} {ms(measured)} (median of {len(steps) - 1} steps)  "
      f"error {100 * (pred['predicted_step_s'] / measured - 1):+.1f} %")
PY
