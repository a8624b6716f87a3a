#!/usr/bin/env bash
# A preempted training job resumes where it stopped (issue 33, "Preemption-safe runs"), on
# the 3-node cluster of scripts/slurm-cluster. The README's batch script: `#SBATCH --requeue`,
# `srun --mpi=pmi2 layerplan train --save-dir … --resume auto`, and `scontrol requeue` when
# train exits 75. Mid-run, `scancel --signal=USR1` (what `#SBATCH --signal=USR1@120` sends
# before the time limit) reaches the 3 ranks: they stop after the same step, rank 0 writes
# that step's checkpoint whole, and the job is requeued; its second run continues from that
# step. The two runs' losses together must equal one process's uninterrupted run within 1e-4
# (tests/slurm/compare_runs.py), the job must end COMPLETED, and no node may drain.
#   tests/slurm/preemption_requeue.sh BUILD_DIR
# Prints "ok - …" or "not ok - …: reason" per check; exits 1 if any check failed.
# Needs root (it starts slurmctld, slurmd and munged); exits 77 (CTest: skipped) otherwise.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: preemption_requeue.sh BUILD_DIR}" && pwd)
PLUGIN=$BUILD/spank_plugin/spank_layerplan.so
CLUSTER=$REPO/scripts/slurm-cluster
COMPARE=$REPO/tests/slurm/compare_runs.py
export LAYERPLAN_SLURM_ROOT=${LAYERPLAN_SLURM_ROOT:-/tmp/slurm-ci}
ROOT=$LAYERPLAN_SLURM_ROOT
TEST_USER=${LAYERPLAN_SLURM_USER:-lpuser}
WORK=$ROOT/work
BATCH=1920  # as tests/slurm/sbatch_training.sh: the plugin's plan splits LeNet-5 over the ranks
STEPS=12
STOP_AFTER=4  # lines of the first run's log before the signal is sent

source "$REPO/tests/slurm/harness.sh"
require_root_and "$PLUGIN" "$BUILD/layerplan"
start_cluster "$PLUGIN"
install -m 0755 "$BUILD/layerplan" "$WORK/layerplan"
as_user() { (cd "$WORK" && timeout 300 runuser -u "$TEST_USER" -- "$@"); }
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
train_args=(--data fashion-mnist --steps $STEPS --shuffle off)

# ---- 1. One process, never stopped ----------------------------------------------------------
out=$(as_user ./layerplan plan --model lenet5 --gpus 1 --batch $BATCH --json one.json 2>&1) &&
  out=$(as_user ./layerplan train --plan one.json "${train_args[@]}" --log-json one.jsonl 2>&1)
if [ $? -ne 0 ]; then
  fail "one-process layerplan train of lenet5 at batch $BATCH" "$out"
  exit 1
fi
ok "one process, never stopped: $(grep '^done' <<<"$out")"

# ---- 2. The README's requeueing batch job ----------------------------------------------------
cat >"$WORK/requeue.sh" <<EOF2
#!/bin/bash
#SBATCH --layerplan=auto --layerplan-model=lenet5 --layerplan-batch=$BATCH
#SBATCH --requeue --open-mode=append
run=\${SLURM_RESTART_COUNT:-0}
srun --mpi=pmi2 ./layerplan train ${train_args[*]} --save-dir ck-\$SLURM_JOB_ID --resume auto \\
  --log-json run-\$SLURM_JOB_ID-\$run.jsonl
status=\$?
echo "run \$run: layerplan train exited \$status"
if [ \$status -eq 75 ]; then scontrol requeue \$SLURM_JOB_ID; fi
exit \$status
EOF2
chmod 0755 "$WORK/requeue.sh"; chown "$TEST_USER" "$WORK/requeue.sh"

job=$(as_user sbatch --parsable -N3 --ntasks-per-node=1 --gpus-per-node=1 -o "$WORK/requeue-%j.txt" requeue.sh 2>&1)
if ! [[ $job =~ ^[0-9]+$ ]]; then fail "sbatch requeue.sh" "$job"; exit 1; fi
first=$WORK/run-$job-0.jsonl
deadline=$((SECONDS + 240))
logged() { cat "$1" 2>/dev/null | wc -l; }
until [ "$(logged "$first")" -ge $STOP_AFTER ] || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
if [ "$(logged "$first")" -lt $STOP_AFTER ]; then
  fail "the first run logs $STOP_AFTER steps" "$(cat "$WORK/requeue-$job.txt" 2>/dev/null)"
  exit 1
fi
scancel --signal=USR1 "$job"
ok "scancel --signal=USR1 $job after $(wc -l <"$first") logged steps"

# Requeued, the job waits for its begin time: Slurm holds a requeued job a while (pending,
# Reason=BeginTime; about 2 minutes in a run here). Once its nodes are idle again (the first run's steps cleaned up: started
# earlier, srun's PMI-2 set-up fails) the test starts it, then it runs to its end.
deadline=$((SECONDS + 400))
started=0
while [ $SECONDS -lt $deadline ]; do
  state=$(job_state "$job")
  case $state in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;;
    PENDING)
      if [ $started -eq 0 ] && [ -z "$(sinfo -h -N -o '%T' | grep -v '^idle$')" ]; then
        echo "# requeued and held ($(scontrol show job "$job" | grep -o 'Reason=[^ ]*')); its nodes idle: started now"
        sleep 2
        scontrol update JobId="$job" StartTime=now && started=1
      fi ;;
  esac
  sleep 0.5
done
out=$(cat "$WORK/requeue-$job.txt" 2>/dev/null)
restarts=$(scontrol show job "$job" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
if [ "$state" = COMPLETED ] && [ "$restarts" = 1 ]; then
  ok "the job was requeued once and ended COMPLETED"
else
  fail "the job was requeued once and ended COMPLETED (it is $state after $restarts restart(s))" "$out"
fi
grep -E '^(\[|run |stopped|--resume|done)' <<<"$out" | grep -v '^\[rank' | sed 's/^/# /'

stopped_at=$(wc -l <"$first")
saved=$WORK/ck-$job/step-$(printf '%08d' "$stopped_at")/model.safetensors
if contains "$out" "stopped by SIGUSR1 after step $stopped_at" && contains "$out" "run 0: layerplan train exited 75"; then
  ok "the first run stopped after step $stopped_at and exited 75"
else
  fail "the first run stopped after step $stopped_at and exited 75" "$out"
fi
if compare=$("$COMPARE" complete "$saved" 2>&1); then
  ok "its checkpoint is whole: $compare"
else
  fail "its checkpoint $saved is whole" "$compare"
fi
if contains "$out" "--resume auto: continuing from ck-$job/step-$(printf '%08d' "$stopped_at")"; then
  ok "the second run continued from step $stopped_at"
else
  fail "the second run continued from step $stopped_at" "$out"
fi
cat "$first" "$WORK/run-$job-1.jsonl" >"$WORK/joined-$job.jsonl" 2>/dev/null
if compare=$("$COMPARE" losses "$WORK/joined-$job.jsonl" "$WORK/one.jsonl" $STEPS 2>&1); then
  ok "the two runs' losses equal one uninterrupted process's: $compare"
else
  fail "the two runs' losses equal one uninterrupted process's" "$compare"
fi

bad=$(sinfo -h -N -o '%N %T' | sort -u | grep -v ' idle$')
if [ -z "$bad" ]; then ok "no node drained"; else fail "no node drained" "$bad"; fi

if [ $failures -gt 0 ]; then echo "# $failures check(s) failed"; exit 1; fi
echo "# all checks passed in $((SECONDS - start)) s"
