#!/usr/bin/env bash
# srun tasks as the ranks of one `layerplan train` (issue 19, part 1), on the 3-node
# cluster of scripts/slurm-cluster: ranks meet through Slurm's PMI-2 (and PMIx), and their
# per-step losses equal a one-process run of the same plan; a step without PMI fails at
# start with the line that says how to start it; a plan binds its model file (trains from
# another folder, refused once the file changed); and the rendezvous time of 3 and 6 ranks
# is printed (docs/BENCHMARKS.md, "Rendezvous under srun").
#   tests/slurm/pmi2_training.sh BUILD_DIR RENDEZVOUS_PROBE
# Prints "ok - …" or "not ok - …: reason" per check; exits 1 if any check failed.
# Needs root (it starts slurmctld, slurmd and munged); exits 77 (CTest: skipped) otherwise.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: pmi2_training.sh BUILD_DIR RENDEZVOUS_PROBE}" && pwd)
PROBE=${2:?usage: pmi2_training.sh BUILD_DIR RENDEZVOUS_PROBE}
PLUGIN=$BUILD/spank_plugin/spank_layerplan.so
CLUSTER=$REPO/scripts/slurm-cluster
export LAYERPLAN_SLURM_ROOT=${LAYERPLAN_SLURM_ROOT:-/tmp/slurm-ci}
ROOT=$LAYERPLAN_SLURM_ROOT
TEST_USER=${LAYERPLAN_SLURM_USER:-lpuser}
WORK=$ROOT/work

source "$REPO/tests/slurm/harness.sh"
require_root_and "$PLUGIN" "$BUILD/layerplan" "$PROBE"
start_cluster "$PLUGIN"

# Copies the test user can run (the build may sit in root's home).
install -m 0755 "$BUILD/layerplan" "$WORK/layerplan"
install -m 0755 "$PROBE" "$WORK/rendezvous_probe"
as_user_within() { local limit=$1; shift; (cd "$WORK" && timeout "$limit" runuser -u "$TEST_USER" -- "$@"); }
as_user() { as_user_within 180 "$@"; }

# Slurm's mpi/pmix connects the stepds of a step to each other directly. On this one-machine
# cluster two faults between Slurm's own daemons have been seen under load, neither in the
# ranks: munge refusing a stepd's credential ("Munge decode failed: Unauthorized credential",
# the three slurmd share one munged), and two stepds dialling each other at the same moment,
# one connection rejected ("Connection reject from ...") and the step hung until killed.
# (Turning direct connections off, mpi.conf PMIxDirectConn=false, makes Slurm 22.05 refuse
# the ranks' PMIx_Get of job data instead: "Bad request ... asked for -1".)
# A PMIx step that fails with one of them is run once more, and the log says so. Its time
# limit is 60 s, not 180: the steps it runs take under 10 s.
exec 3>&1  # the test's log, for run_pmix's note while its caller captures the output
stepd_fault() { contains "$1" "Munge decode failed" || contains "$1" "Connection reject from"; }
run_pmix() {  # run_pmix WHAT CMD...: the output of CMD as the test user, rerun once after a stepd fault
  local what=$1 out rc
  shift
  out=$(as_user_within 60 "$@" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && stepd_fault "$out"; then
    echo "# $what: run again: $(grep -m1 -oE 'Munge decode failed|Connection reject from [^ ]*' <<<"$out") between Slurm's stepds (one-machine cluster)" >&3
    out=$(as_user_within 60 "$@" 2>&1)
    rc=$?
  fi
  printf '%s\n' "$out"
  return $rc
}

# ---- 1. LeNet-5 plans for 3 devices, one per node, and for 1 device ----------------------
# At batch 48 the layer-wise plan keeps every layer of so small a model on device 0; at
# batch 480 it splits the batch of the early layers over all 3, so the ranks exchange data.
make_plan() {  # make_plan FILE ARGS...: layerplan plan as the test user
  local file=$1; shift
  if ! out=$(as_user ./layerplan plan --model lenet5 --gpus-per-node 1 --json "$file" "$@" 2>&1); then
    fail "layerplan plan $*" "$out"
    exit 1
  fi
}
for batch in 48 480; do
  make_plan "$WORK/lenet5-3-b$batch.json" --gpus 3 --batch $batch
  # One process runs a plan for one device: the same model, batch and data, so the same losses.
  make_plan "$WORK/lenet5-1-b$batch.json" --gpus 1 --batch $batch
done
ok "layerplan plan --model lenet5 --gpus 3 and --gpus 1, --batch 48 and 480"
PLAN=$WORK/lenet5-3-b48.json
common_args=(--data synthetic --steps 10 --shuffle off)
train_args=(--plan "$PLAN" "${common_args[@]}")

# ---- 2. srun --mpi=pmi2 -N3 -n3: three ranks on three nodes, one training, whose per-step
# losses equal a one-process run's within 1e-4 relative ---------------------------------
same_losses() {  # same_losses A.jsonl B.jsonl: prints the largest relative difference
  "$REPO/tests/slurm/compare_runs.py" losses "$1" "$2" 10
}
# The same with PMIx (`srun --mpi=pmix`, Slurm's mpi/pmix with Debian's libpmix2) at batch 480.
for run in "pmi2 48" "pmi2 480" "pmix 480"; do
  read -r mpi batch <<<"$run"
  one=$WORK/one-b$batch.jsonl three=$WORK/srun-$mpi-b$batch.jsonl
  rm -f "$three"
  if [ ! -s "$one" ]; then
    out=$(as_user ./layerplan train --plan "$WORK/lenet5-1-b$batch.json" "${common_args[@]}" --log-json "$one" 2>&1)
    rc=$?
    [ $rc -eq 0 ] || { fail "one-process layerplan train at batch $batch (rc $rc)" "$out"; continue; }
  fi
  what="srun --mpi=$mpi -N3 -n3 layerplan train at batch $batch"
  runner=as_user
  [ "$mpi" = pmix ] && runner="run_pmix srun-pmix-train"
  out=$($runner srun --mpi=$mpi -N3 -n3 ./layerplan train --plan "$WORK/lenet5-3-b$batch.json" "${common_args[@]}" \
        --log-json "$three" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$three" ]; then
    fail "$what (rc $rc)" "$out"
    continue
  fi
  echo "$out" | grep -E '^(training|done|communication)' | sed 's/^/# /'
  if compare=$(same_losses "$three" "$one" 2>&1); then
    ok "$what: losses equal one process's: $compare"
  else
    fail "$what: losses equal one process's" "$compare"
  fi
done

# ---- 2c. The plugin: a step of `layerplan train` with fewer tasks than the plan's devices
# fails at task start, naming both numbers and the srun line; other steps run as they are --
cat >"$WORK/mismatch.sh" <<'EOF2'
#!/bin/bash
srun -N3 --ntasks-per-node=1 hostname >/dev/null && echo "helper step ran"
srun --mpi=pmi2 -N3 --ntasks-per-node=1 ./layerplan train --data synthetic --steps 10 --shuffle off
EOF2
chmod 0755 "$WORK/mismatch.sh"; chown "$TEST_USER" "$WORK/mismatch.sh"
job=$(as_user sbatch --parsable -o "$WORK/out-%j.txt" -N3 --gpus-per-node=2 --layerplan=auto \
      --layerplan-model=lenet5 --layerplan-batch=480 mismatch.sh 2>&1)
state=NOT-SUBMITTED out=$job
if [[ $job =~ ^[0-9]+$ ]]; then
  deadline=$((SECONDS + 120))
  while squeue -h -j "$job" 2>/dev/null | grep -q . && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  state=$(scontrol show job "$job" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  out=$(cat "$WORK/out-$job.txt" 2>/dev/null)
fi
if [ "$state" = FAILED ] && contains "$out" "helper step ran" && contains "$out" "plan is for 6 devices" \
   && contains "$out" "this step has 3 tasks" && contains "$out" "srun --mpi=pmi2 -N3 -n 6" \
   && ! contains "$out" "step 1/"; then
  ok "3 tasks of layerplan train for a 6-device plan fail at task start naming srun -n 6; a helper step runs"
else
  fail "3 tasks of layerplan train for a 6-device plan fail at task start naming srun -n 6 (state $state)" "$out"
fi
bad=$(sinfo -h -N -o '%N %T' | sort -u | grep -v ' idle$')
if [ -z "$bad" ]; then ok "no node drained"; else fail "no node drained" "$bad"; fi

# ---- 2d. A plan binds its model file: --layerplan-model=/ABS/PATH.onnx trains from another
# working directory, each task checks the published plan's SHA-256 (LAYERPLAN_PLAN_SHA256),
# and the model file changed after planning is refused, by the task and by the plugin -------
MODELS=$ROOT/models/bound  # not the working directory of any step below
rm -rf "$MODELS"; mkdir -p "$MODELS"
install -m 0644 -o "$TEST_USER" "$REPO/tests/onnx_data/tiny.onnx" "$MODELS/bound.onnx"
chown "$TEST_USER" "$MODELS"
bound_args=(--layerplan=auto --layerplan-model="$MODELS/bound.onnx" --layerplan-batch=12 --gpus-per-node=1)
out=$(as_user srun --mpi=pmi2 -N3 --ntasks-per-node=1 "${bound_args[@]}" bash -c \
      'echo "sha: $(sha256sum <"$LAYERPLAN_PLAN" | cut -c1-64) ${LAYERPLAN_PLAN_SHA256:-unset}"' 2>&1)
if [ "$(grep -c '^sha: ' <<<"$out")" = 3 ] && ! grep '^sha: ' <<<"$out" | awk '$2 != $3 {bad=1} END {exit !bad}'; then
  ok "every task's LAYERPLAN_PLAN_SHA256 is the SHA-256 of its plan file"
else
  fail "every task's LAYERPLAN_PLAN_SHA256 is the SHA-256 of its plan file" "$out"
fi
out=$(as_user srun --mpi=pmi2 -N3 --ntasks-per-node=1 "${bound_args[@]}" ./layerplan train --data synthetic \
      --steps 2 --shuffle off 2>&1)
rc=$?
if [ $rc -eq 0 ] && contains "$out" "step 2/2"; then
  ok "srun --layerplan-model=$MODELS/bound.onnx: 3 tasks train it from $WORK"
else
  fail "srun --layerplan-model=$MODELS/bound.onnx: 3 tasks train it from $WORK (rc $rc)" "$out"
fi
# A plan made from the file, then the file replaced by another of the same graph and name.
if ! out=$(as_user ./layerplan plan --model "$MODELS/bound.onnx" --gpus 3 --gpus-per-node 1 --batch 12 \
           --json "$WORK/bound-3.json" 2>&1); then
  fail "layerplan plan --model $MODELS/bound.onnx" "$out"
fi
install -m 0644 -o "$TEST_USER" "$REPO/tests/onnx_data/tiny_unsorted.onnx" "$MODELS/bound.onnx"
out=$(as_user srun --mpi=pmi2 -N3 -n3 ./layerplan train --plan "$WORK/bound-3.json" "${common_args[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && contains "$out" "model file '$MODELS/bound.onnx' is not the one plan file '$WORK/bound-3.json'" \
   && ! contains "$out" "step 1/"; then
  ok "a changed model file is refused by the tasks, naming it and the plan"
else
  fail "a changed model file is refused by the tasks, naming it and the plan (rc $rc)" "$out"
fi
out=$(as_user srun --mpi=pmi2 -N3 -n3 --gpus-per-node=1 --layerplan="$WORK/bound-3.json" ./layerplan train \
      "${common_args[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && contains "$out" "model file '$MODELS/bound.onnx' is not the one" && ! contains "$out" "step 1/"; then
  ok "--layerplan=PLANFILE whose model file changed fails the step at start"
else
  fail "--layerplan=PLANFILE whose model file changed fails the step at start (rc $rc)" "$out"
fi

# ---- 3. Without PMI (MpiDefault=none here) a step of 3 tasks fails at start, saying how ---
out=$(as_user srun -N3 -n3 ./layerplan train "${train_args[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && contains "$out" "srun --mpi=pmi2" && contains "$out" "MpiDefault=pmi2" \
   && ! contains "$out" "step 1/"; then
  ok "srun without --mpi=pmi2 fails at start naming srun --mpi=pmi2"
else
  fail "srun without --mpi=pmi2 fails at start naming srun --mpi=pmi2 (rc $rc)" "$out"
fi

# ---- 4. A plan for 3 devices on 2 tasks: the line names srun -n 3 -----------------------
out=$(as_user srun --mpi=pmi2 -N2 -n2 ./layerplan train "${train_args[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && contains "$out" "srun --mpi=pmi2 -n 3"; then ok "2 tasks for a 3-device plan name srun -n 3"; else
  fail "2 tasks for a 3-device plan name srun -n 3 (rc $rc)" "$out"
fi

# ---- 5. Rendezvous time (process manager init + exchange + Gloo connect) and the time to
# share a 128-byte id from rank 0 (as NCCL's unique id goes), 3 and 6 ranks, 5 runs each ----
for mpi in pmi2 pmix; do
  for tasks in 3 6; do
    for i in 1 2 3 4 5; do
      if [ "$mpi" = pmix ]; then
        out=$(run_pmix "--mpi=pmix probe run $i" srun --mpi=pmix -N3 -n$tasks ./rendezvous_probe 2>&1)
      else
        out=$(as_user srun --mpi=$mpi -N3 -n$tasks ./rendezvous_probe 2>&1)
      fi
      if ! contains "$out" "all-reduce ok"; then
        fail "rendezvous probe of $tasks ranks under srun --mpi=$mpi" "$out"
        break
      fi
      # The probe's line; a stepd's error the run survived (see stepd_fault) is noted after it.
      echo "# --mpi=$mpi: $(grep -m1 'rendezvous ranks' <<<"$out")"
      grep -q 'slurmstepd.*error' <<<"$out" &&
        echo "#   (the run passed through a stepd error: $(grep -m1 -o 'slurmstepd.*error:.*' <<<"$out"))"
    done
    [ $i -eq 5 ] && contains "$out" "all-reduce ok" &&
      ok "$tasks ranks meet and share rank 0's id under srun --mpi=$mpi (5 runs)"
  done
done

if [ $failures -gt 0 ]; then echo "# $failures check(s) failed"; exit 1; fi
echo "# all checks passed in $((SECONDS - start)) s"
