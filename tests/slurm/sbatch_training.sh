#!/usr/bin/env bash
# The whole flow of the README (issue 19, "End to end"), on the 3-node cluster of
# scripts/slurm-cluster: a batch job `sbatch --layerplan=auto --layerplan-model=lenet5`
# whose script runs `srun --mpi=pmi2 layerplan train --data fashion-mnist --steps 20
# --shuffle off --log-json … --save …` on the plan the plugin made, with 3 ranks (one per
# node) and 6 ranks (two per node). Each job must end COMPLETED, on a plan for as many
# devices as it has tasks, with per-step losses and a saved checkpoint equal to a
# one-process run of the same model and batch within 1e-4 (tests/slurm/compare_runs.py),
# and no node drained.
#   tests/slurm/sbatch_training.sh BUILD_DIR
# Prints "ok - …" or "not ok - …: reason" per check; exits 1 if any check failed.
# Needs root (it starts slurmctld, slurmd and munged); exits 77 (CTest: skipped) otherwise.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: sbatch_training.sh BUILD_DIR}" && pwd)
PLUGIN=$BUILD/spank_plugin/spank_layerplan.so
CLUSTER=$REPO/scripts/slurm-cluster
COMPARE=$REPO/tests/slurm/compare_runs.py
export LAYERPLAN_SLURM_ROOT=${LAYERPLAN_SLURM_ROOT:-/tmp/slurm-ci}
ROOT=$LAYERPLAN_SLURM_ROOT
TEST_USER=${LAYERPLAN_SLURM_USER:-lpuser}
WORK=$ROOT/work
# At this batch the plugin's plan (H100 nodes) splits LeNet-5 over every device it has;
# at smaller ones it keeps the whole model on device 0.
BATCH=1920
STEPS=20

source "$REPO/tests/slurm/harness.sh"
require_root_and "$PLUGIN" "$BUILD/layerplan"
start_cluster "$PLUGIN"
install -m 0755 "$BUILD/layerplan" "$WORK/layerplan"
as_user() { (cd "$WORK" && timeout 300 runuser -u "$TEST_USER" -- "$@"); }
train_args=(--data fashion-mnist --steps $STEPS --shuffle off)

# ---- 1. One process: the same model, batch and data on a plan for one device ------------
out=$(as_user ./layerplan plan --model lenet5 --gpus 1 --batch $BATCH --json one.json 2>&1) &&
  out=$(as_user ./layerplan train --plan one.json "${train_args[@]}" --log-json one.jsonl --save one.safetensors 2>&1)
if [ $? -ne 0 ]; then
  fail "one-process layerplan train of lenet5 at batch $BATCH" "$out"
  exit 1
fi
ok "one process: $(grep '^done' <<<"$out")"

# ---- 2. The README's batch job, with 3 and with 6 ranks ------------------------------------
cat >"$WORK/train.sh" <<EOF2
#!/bin/bash
#SBATCH --layerplan=auto --layerplan-model=lenet5 --layerplan-batch=$BATCH
cp "\$LAYERPLAN_PLAN" plan-\$SLURM_JOB_ID.json
srun --mpi=pmi2 ./layerplan train ${train_args[*]} --log-json run-\$SLURM_JOB_ID.jsonl \\
  --save run-\$SLURM_JOB_ID.safetensors
EOF2
chmod 0755 "$WORK/train.sh"; chown "$TEST_USER" "$WORK/train.sh"

# The plan file $1's device count, how many devices its layers use, and how many of its
# layers are split over more than one.
plan_summary() {
  python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
used = {d for l in p["layers"] for d in l["devices"]}
split = sum(len(l["devices"]) > 1 for l in p["layers"])
print(p["cluster"]["devices"], len(used), split, len(p["layers"]))' "$1"
}

for per_node in 1 2; do
  ranks=$((3 * per_node))
  what="sbatch -N3 --ntasks-per-node=$per_node ($ranks ranks)"
  job=$(as_user sbatch --parsable -N3 --ntasks-per-node=$per_node --gpus-per-node=$per_node \
        -o "$WORK/out-%j.txt" train.sh 2>&1)
  if ! [[ $job =~ ^[0-9]+$ ]]; then fail "$what: submitted" "$job"; continue; fi
  deadline=$((SECONDS + 300))
  while squeue -h -j "$job" 2>/dev/null | grep -q . && [ $SECONDS -lt $deadline ]; do sleep 0.5; done
  state=$(scontrol show job "$job" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  out=$(cat "$WORK/out-$job.txt" 2>/dev/null)
  if [ "$state" != COMPLETED ]; then fail "$what: COMPLETED (it is $state)" "$out"; continue; fi
  read -r devices used split layers < <(plan_summary "$WORK/plan-$job.json")
  if [ "$devices" = "$ranks" ]; then
    ok "$what: COMPLETED on the plugin's plan for $devices devices ($split of $layers layers split, over $used devices)"
  else
    fail "$what: the plugin's plan is for $ranks devices" "it is for $devices"
  fi
  grep -E '^(training|done)' <<<"$out" | sed 's/^/# /'
  if compare=$("$COMPARE" losses "$WORK/run-$job.jsonl" "$WORK/one.jsonl" $STEPS 2>&1); then
    ok "$what: losses equal one process's: $compare"
  else
    fail "$what: losses equal one process's" "$compare"
  fi
  if compare=$("$COMPARE" checkpoints "$WORK/run-$job.safetensors" "$WORK/one.safetensors" 2>&1); then
    ok "$what: checkpoint equals one process's: $compare"
  else
    fail "$what: checkpoint equals one process's" "$compare"
  fi
done

bad=$(sinfo -h -N -o '%N %T' | sort -u | grep -v ' idle$')
if [ -z "$bad" ]; then ok "no node drained"; else fail "no node drained" "$bad"; fi

if [ $failures -gt 0 ]; then echo "# $failures check(s) failed"; exit 1; fi
echo "# all checks passed in $((SECONDS - start)) s"
