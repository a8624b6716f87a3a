#!/usr/bin/env bash
# A rank that dies ends the whole step (issue 19, "Faults"), on the 3-node cluster of
# scripts/slurm-cluster: a batch job runs `srun --mpi=pmi2 --kill-on-bad-exit=1 layerplan
# train` on 3 ranks; the test kills rank 1 with SIGKILL mid-run and checks that the job ends
# FAILED within 15 s of the kill, its output names the rank that stopped answering, no
# layerplan process is left, and no node is drained. Prints the kill-to-end time
# (docs/BENCHMARKS.md, "A rank killed under srun").
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

# At batch 480 the plan splits the early layers' batch over the 3 ranks, so every step
# exchanges data: a rank that dies is noticed by the others at their next transfer.
cat >"$WORK/fault.sh" <<'EOF2'
#!/bin/bash
#SBATCH -N3 --ntasks-per-node=1 --gpus-per-node=1
#SBATCH --layerplan=auto --layerplan-model=lenet5 --layerplan-batch=480
srun --mpi=pmi2 --kill-on-bad-exit=1 ./layerplan train --data synthetic --steps 100000 --shuffle off \
  --log-json fault.jsonl
EOF2
chmod 0755 "$WORK/fault.sh"; chown "$TEST_USER" "$WORK/fault.sh"
rm -f "$WORK/fault.jsonl"
job=$(cd "$WORK" && runuser -u "$TEST_USER" -- sbatch --parsable -o "$WORK/out-%j.txt" fault.sh 2>&1)
if ! [[ $job =~ ^[0-9]+$ ]]; then
  fail "sbatch of a 3-rank layerplan train: not submitted" "$job"
  exit 1
fi

# Wait until the ranks have trained a few steps, then kill rank 1.
deadline=$((SECONDS + 120))
while [ "$(cat "$WORK/fault.jsonl" 2>/dev/null | wc -l)" -lt 3 ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
victim=$(job_pids "$job" 1)
if [ -z "$victim" ]; then
  fail "rank 1 of job $job is running after 3 steps" "$(cat "$WORK/out-$job.txt" 2>/dev/null)"
  exit 1
fi
ranks=$(job_pids "$job" "")  # all three, checked after the end (job ids restart with the cluster)
killed_at=$(date +%s.%N)
kill -9 $victim
deadline=$((SECONDS + 120))
while squeue -h -j "$job" 2>/dev/null | grep -q . && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
ended_at=$(date +%s.%N)
elapsed=$(python3 -c "print(f'{$ended_at - $killed_at:.1f}')")
# The job's end in squeue may come a moment before its last process is reaped.
alive() { local p; for p in $ranks; do [ -d "/proc/$p" ] && echo "$p"; done; }
while [ -n "$(alive)" ] && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
gone_at=$(date +%s.%N)
gone=$(python3 -c "print(f'{$gone_at - $killed_at:.1f}')")
state=$(scontrol show job "$job" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
out=$(cat "$WORK/out-$job.txt" 2>/dev/null)
echo "# rank 1 killed; the job ended $elapsed s later, $state; its last process was gone after $gone s"
grep -E 'layerplan:|srun:|error' <<<"$out" | head -8 | sed 's/^/#   /'

if python3 -c "import sys; sys.exit(0 if $elapsed <= $LIMIT_S else 1)"; then
  ok "the job ended within $LIMIT_S s of the kill of rank 1 ($elapsed s)"
else
  fail "the job ended within $LIMIT_S s of the kill of rank 1 ($elapsed s)" "$out"
fi
if [ "$state" = FAILED ]; then ok "the job is FAILED"; else fail "the job is FAILED (it is $state)" "$out"; fi
if grep -qE 'n2: task 1: Killed|rank 1 stopped answering' <<<"$out"; then
  ok "the output names rank 1 and its node"
else
  fail "the output names rank 1 and its node" "$out"
fi
left=$(alive)
if [ -z "$left" ] && python3 -c "import sys; sys.exit(0 if $gone <= $LIMIT_S else 1)"; then
  ok "no layerplan process of the job left $gone s after the kill"
else
  fail "no layerplan process of the job left within $LIMIT_S s of the kill ($gone s)" "$left"
fi
bad=$(sinfo -h -N -o '%N %T' | sort -u | grep -v ' idle$')
if [ -z "$bad" ]; then ok "no node drained"; else fail "no node drained" "$bad"; fi

if [ $failures -gt 0 ]; then echo "# $failures check(s) failed"; exit 1; fi
echo "# all checks passed in $((SECONDS - start)) s"
