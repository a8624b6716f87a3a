#!/usr/bin/env bash
# A rank that dies ends the whole step, and scancel stops every rank (issue 19, "Faults"), on
# the 3-node cluster of scripts/slurm-cluster. A batch job of the README's kind
# (`sbatch --layerplan=auto`, `srun --mpi=pmi2 layerplan train`, no --kill-on-bad-exit: in a
# job the plugin planned, srun defaults to it) trains on 3 ranks, saving a checkpoint after
# every step. The test
#   1. kills rank 1 with SIGKILL mid-run: the job ends FAILED within 15 s of the kill, its
#      output names rank 1 and its node, no layerplan process of the job is left, and the
#      checkpoint is whole (a checkpoint being written is complete or absent);
#   2. runs the job again and cancels it with scancel: CANCELLED, every rank gone within 15 s;
# and no node is drained. Prints the kill-to-end times (docs/BENCHMARKS.md, "A rank killed
# under srun").
#   tests/slurm/rank_failure.sh BUILD_DIR
# Prints "ok - …" or "not ok - …: reason" per check; exits 1 if any check failed.
# Needs root (it starts slurmctld, slurmd and munged); exits 77 (CTest: skipped) otherwise.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: rank_failure.sh BUILD_DIR}" && pwd)
PLUGIN=$BUILD/spank_plugin/spank_layerplan.so
CLUSTER=$REPO/scripts/slurm-cluster
export LAYERPLAN_SLURM_ROOT=${LAYERPLAN_SLURM_ROOT:-/tmp/slurm-ci}
ROOT=$LAYERPLAN_SLURM_ROOT
TEST_USER=${LAYERPLAN_SLURM_USER:-lpuser}
WORK=$ROOT/work
LIMIT_S=15

source "$REPO/tests/slurm/harness.sh"
require_root_and "$PLUGIN" "$BUILD/layerplan"
start_cluster "$PLUGIN"
install -m 0755 "$BUILD/layerplan" "$WORK/layerplan"

# The layerplan processes of job $1 whose task rank is $2 ($2 empty: any rank).
job_pids() {
  local pid env
  for pid in $(pgrep -x layerplan); do
    env=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null) || continue
    grep -qx "SLURM_JOB_ID=$1" <<<"$env" || continue
    [ -z "$2" ] || grep -qx "SLURM_PROCID=$2" <<<"$env" || continue
    echo "$pid"
  done
}
seconds_since() { python3 -c "import time; print(f'{time.time() - $1:.1f}')"; }
within_limit() { python3 -c "import sys; sys.exit(0 if $1 <= $LIMIT_S else 1)"; }

# At batch 1920 the plugin's plan splits every layer over the 3 ranks, so every step
# exchanges data (at smaller batches it keeps LeNet-5 on device 0 and ranks 1, 2 idle).
cat >"$WORK/fault.sh" <<'EOF2'
#!/bin/bash
#SBATCH -N3 --ntasks-per-node=1 --gpus-per-node=1
#SBATCH --layerplan=auto --layerplan-model=lenet5 --layerplan-batch=1920
srun --mpi=pmi2 ./layerplan train --data synthetic --steps 100000 --shuffle off \
  --log-json fault-$SLURM_JOB_ID.jsonl --save fault-$SLURM_JOB_ID.safetensors --save-every 1
EOF2
chmod 0755 "$WORK/fault.sh"; chown "$TEST_USER" "$WORK/fault.sh"

# Submits fault.sh and waits until it has trained 3 steps; sets job and ranks (the pids of
# its three layerplan processes), or exits 1.
start_job() {
  job=$(cd "$WORK" && runuser -u "$TEST_USER" -- sbatch --parsable -o "$WORK/out-%j.txt" fault.sh 2>&1)
  if ! [[ $job =~ ^[0-9]+$ ]]; then
    fail "sbatch of a 3-rank layerplan train: not submitted" "$job"
    exit 1
  fi
  local deadline=$((SECONDS + 120))
  while [ "$(cat "$WORK/fault-$job.jsonl" 2>/dev/null | wc -l)" -lt 3 ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  ranks=$(job_pids "$job" "")
  if [ "$(wc -w <<<"$ranks")" -ne 3 ]; then
    fail "job $job has 3 ranks training after 3 steps" "pids: $ranks; $(cat "$WORK/out-$job.txt" 2>/dev/null)"
    exit 1
  fi
}

# Waits for job $job to leave the queue and its ranks to be gone; sets ended and gone
# (seconds since $1), state and out.
wait_end() {
  local deadline=$((SECONDS + 120)) p alive
  while squeue -h -j "$job" 2>/dev/null | grep -q . && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  ended=$(seconds_since "$1")
  # The job's end in squeue may come a moment before its last process is reaped.
  while [ $SECONDS -lt $deadline ]; do
    alive=""
    for p in $ranks; do [ -d "/proc/$p" ] && alive+=" $p"; done
    [ -z "$alive" ] && break
    sleep 0.1
  done
  gone=$(seconds_since "$1")
  left=$alive
  state=$(scontrol show job "$job" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  out=$(cat "$WORK/out-$job.txt" 2>/dev/null)
}

# ---- 1. kill -9 of rank 1 ---------------------------------------------------------------
start_job
victim=$(job_pids "$job" 1)
t0=$(date +%s.%N)
kill -9 $victim
wait_end "$t0"
echo "# rank 1 killed; the job ended $ended s later, $state; its last process was gone after $gone s"
grep -E 'layerplan:|srun:|error' <<<"$out" | head -8 | sed 's/^/#   /'
if within_limit "$ended"; then ok "the job ended within $LIMIT_S s of the kill of rank 1 ($ended s)"; else
  fail "the job ended within $LIMIT_S s of the kill of rank 1 ($ended s)" "$out"
fi
if [ "$state" = FAILED ]; then ok "the job is FAILED"; else fail "the job is FAILED (it is $state)" "$out"; fi
if grep -qE 'n2: task 1: Killed|rank 1 stopped answering' <<<"$out"; then
  ok "the output names rank 1 and its node"
else
  fail "the output names rank 1 and its node" "$out"
fi
if [ -z "$left" ] && within_limit "$gone"; then ok "no layerplan process of the job left $gone s after the kill"; else
  fail "no layerplan process of the job left within $LIMIT_S s of the kill ($gone s)" "$left"
fi
checkpoint=$WORK/fault-$job.safetensors
if [ ! -e "$checkpoint" ]; then
  ok "the checkpoint being written is absent"
elif whole=$("$REPO/tests/slurm/compare_runs.py" complete "$checkpoint" 2>&1); then
  ok "the checkpoint saved every step is whole after the kill: $whole"
else
  fail "the checkpoint saved every step is whole after the kill" "$whole"
fi

# ---- 2. scancel ---------------------------------------------------------------------------
start_job
t0=$(date +%s.%N)
scancel "$job"
wait_end "$t0"
echo "# scancel; the job ended $ended s later, $state; its last process was gone after $gone s"
if [ "$state" = CANCELLED ] && [ -z "$left" ] && within_limit "$gone"; then
  ok "scancel: the job is CANCELLED and every rank gone within $LIMIT_S s ($gone s)"
else
  fail "scancel: the job is CANCELLED and every rank gone within $LIMIT_S s ($state, $gone s)" "left: $left; $out"
fi

bad=$(sinfo -h -N -o '%N %T' | sort -u | grep -v ' idle$')
if [ -z "$bad" ]; then ok "no node drained"; else fail "no node drained" "$bad"; fi

if [ $failures -gt 0 ]; then echo "# $failures check(s) failed"; exit 1; fi
echo "# all checks passed in $((SECONDS - start)) s"
