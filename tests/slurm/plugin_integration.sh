#!/usr/bin/env bash
# The SPANK plugin on a real Slurm cluster (issue 4's acceptance): starts the 3-node
# cluster of scripts/slurm-cluster with the freshly built plugin, submits jobs as an
# unprivileged user, checks what they see, and stops the cluster on every exit path.
#   tests/slurm/plugin_integration.sh BUILD_DIR
# Prints "ok - …" or "not ok - …: reason" per check; exits 1 if any check failed.
# Needs root (it starts slurmctld, slurmd and munged); exits 77 (CTest: skipped) with the
# reason otherwise.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: plugin_integration.sh BUILD_DIR}" && pwd)
PLUGIN=$BUILD/spank_plugin/spank_layerplan.so
LAYERPLAN=$BUILD/layerplan
CLUSTER=$REPO/scripts/slurm-cluster
export LAYERPLAN_SLURM_ROOT=${LAYERPLAN_SLURM_ROOT:-/tmp/slurm-ci}
ROOT=$LAYERPLAN_SLURM_ROOT
TEST_USER=${LAYERPLAN_SLURM_USER:-lpuser}
WORK=$ROOT/work
PLUGSTACK=/etc/slurm/plugstack.conf.d/layerplan.conf
H100_XML=$ROOT/topologies/flux-dell-xe8640-4xh100-nvlink-4xndr.xml

source "$REPO/tests/slurm/harness.sh"
require_root_and "$PLUGIN" "$LAYERPLAN"
check() {  # check NAME CONDITION-COMMAND... (output shown on failure)
  local name=$1; shift
  if "$@"; then ok "$name"; else fail "$name" "${DETAIL:-}"; fi
}
start_cluster "$PLUGIN"

as_user() { (cd "$WORK" && timeout 60 runuser -u "$TEST_USER" -- "$@"); }

# The plugstack.conf line: the CI admin config plus the given key=value overrides.
set_plugstack() {
  printf '# written by layerplan scripts/slurm-cluster\nrequired %s/lib/spank_layerplan.so config=%s/layerplan.toml topology_xml=%s %s\n' \
    "$ROOT" "$ROOT" "$H100_XML" "$*" >"$PLUGSTACK"
}
restore_config() { install -m 0644 "$REPO/etc/layerplan.toml" "$ROOT/layerplan.toml"; set_plugstack; }

# Submits a job as the test user (sbatch ARGS...), waits for it to end, and sets
# JOB, STATE (e.g. COMPLETED, FAILED) and OUT (its output file's text).
run_job() {
  JOB=$(as_user sbatch --parsable -o "$WORK/out-%j.txt" "$@" 2>&1)
  if ! [[ $JOB =~ ^[0-9]+$ ]]; then
    STATE="NOT-SUBMITTED"; OUT=$JOB; return
  fi
  local deadline=$((SECONDS + 90))
  while squeue -h -j "$JOB" 2>/dev/null | grep -q .; do
    if [ $SECONDS -ge $deadline ]; then
      scancel "$JOB"; STATE="TIMEOUT(test)"; OUT=$(cat "$WORK/out-$JOB.txt" 2>/dev/null); return
    fi
    sleep 0.2
  done
  STATE=$(scontrol show job "$JOB" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  OUT=$(cat "$WORK/out-$JOB.txt" 2>/dev/null)
}

# Every node idle (none drained or down); resumes drained nodes so later checks can run.
nodes_idle() {
  local states bad
  states=$(sinfo -h -N -o '%N %T' | sort -u)
  bad=$(grep -v ' idle$' <<<"$states")
  if [ -n "$bad" ]; then
    DETAIL="nodes not idle: $(tr '\n' ' ' <<<"$bad") ($(sinfo -h -N -o '%N %E' | tr '\n' ' '))"
    sinfo -h -N -t drain,down -o %N | xargs -r -I{} scontrol update nodename={} state=resume
    return 1
  fi
}

script() {  # script NAME: stdin becomes an executable job script in WORK
  cat >"$WORK/$1"
  chmod 0755 "$WORK/$1"
  chown "$TEST_USER" "$WORK/$1"
}

# ---- 1. The flags are in the help of sbatch and srun ----------------------------------
for cmd in sbatch srun; do
  help=$(as_user "$cmd" --help 2>&1)
  missing=""
  for flag in "--layerplan=" "--layerplan-model=" "--layerplan-batch=" "--layerplan-explain" "[layerplan]"; do
    contains "$help" "$flag" || missing+=" $flag"
  done
  DETAIL="missing:$missing"
  check "$cmd --help lists the layerplan flags" test -z "$missing"
done

# ---- 2. Bad values are refused at submission, naming the value -------------------------
refused() {  # refused VALUE-IN-MESSAGE CMD ARGS...
  local want=$1; shift
  local out rc
  out=$(as_user "$@" 2>&1); rc=$?
  DETAIL="rc=$rc output: $out"
  [ $rc -ne 0 ] && contains "$out" "$want"
}
for cmd in sbatch srun; do
  if [ $cmd = sbatch ]; then tail_args=(--wrap true); else tail_args=(true); fi
  check "$cmd refuses --layerplan=fast" refused "'fast'" $cmd --layerplan=fast "${tail_args[@]}"
  check "$cmd refuses a missing model" refused "'nosuchnet'" $cmd --layerplan=auto --layerplan-model=nosuchnet "${tail_args[@]}"
  check "$cmd refuses --layerplan-batch=0" refused "'0'" $cmd --layerplan=auto --layerplan-batch=0 "${tail_args[@]}"
  check "$cmd refuses --layerplan-batch=-8" refused "'-8'" $cmd --layerplan=auto --layerplan-batch=-8 "${tail_args[@]}"
done
DETAIL="queue: $(squeue -h)"
check "nothing refused was queued" test -z "$(squeue -h)"

# ---- 3. sbatch -N3 --gpus-per-node=4 --layerplan=auto --layerplan-model=resnet50 -----------
script main.sh <<'EOF'
#!/bin/bash
env | grep -E '^LAYERPLAN_(PLAN|MODE|STEP_MS|SUMMARY)=' | sort | sed 's/^/batch: /'
srun -N3 --ntasks-per-node=1 bash -c 'echo "step: $SLURMD_NODENAME|$LAYERPLAN_PLAN|$(sha256sum <"$LAYERPLAN_PLAN" | cut -c1-64)|$LAYERPLAN_MODE|$LAYERPLAN_STEP_MS"'
EOF
run_job -N3 --gpus-per-node=4 --layerplan=auto --layerplan-model=resnet50 main.sh
MAIN_JOB=$JOB
DETAIL="state $STATE, output: $OUT"
check "resnet50 on 3 x 4 GPUs: the job completes" test "$STATE" = COMPLETED
batch_plan=$(sed -n 's/^batch: LAYERPLAN_PLAN=//p' <<<"$OUT")
batch_mode=$(sed -n 's/^batch: LAYERPLAN_MODE=//p' <<<"$OUT")
batch_ms=$(sed -n 's/^batch: LAYERPLAN_STEP_MS=//p' <<<"$OUT")
batch_summary=$(sed -n 's/^batch: LAYERPLAN_SUMMARY=//p' <<<"$OUT")
DETAIL="output: $OUT"
check "the batch script gets LAYERPLAN_PLAN, _MODE, _STEP_MS and _SUMMARY" \
  test -n "$batch_plan" -a "$batch_mode" = auto -a -n "$batch_ms" -a -n "$batch_summary"
check "LAYERPLAN_STEP_MS is a positive number" awk -v v="$batch_ms" 'BEGIN { exit !(v + 0 > 0) }'
DETAIL="summary: $batch_summary"
check "the summary names the model and the nodes" eval 'contains "$batch_summary" resnet50 && contains "$batch_summary" "3 nodes x 4"'
DETAIL="$(ls -l "$batch_plan" 2>&1)"
check "the batch plan file is owned by the job's user" test "$(stat -c %U "$batch_plan" 2>/dev/null)" = "$TEST_USER"
readback=$("$LAYERPLAN" check-plan "$batch_plan" --model resnet50 --gpus 12 2>&1)
DETAIL="$readback"
check "layerplan check-plan reads the batch plan back (resnet50, 12 GPUs)" contains "$readback" "a valid plan"
steps=$(grep '^step: ' <<<"$OUT" | sed 's/^step: //' | sort)
nodes=$(cut -d'|' -f1 <<<"$steps" | tr '\n' ' ')
paths=$(cut -d'|' -f2 <<<"$steps" | sort -u)
hashes=$(cut -d'|' -f3 <<<"$steps" | sort -u)
modes=$(cut -d'|' -f4 <<<"$steps" | sort -u)
DETAIL="step lines: $steps"
check "an srun inside the script runs on n1, n2 and n3" test "$nodes" = "n1 n2 n3 "
check "all three nodes see one plan file with identical content" test "$(wc -l <<<"$paths")" = 1 -a "$(wc -l <<<"$hashes")" = 1 -a -n "$paths"
check "the srun sees LAYERPLAN_MODE=auto" test "$modes" = auto
step_plan=$paths
readback=$("$LAYERPLAN" check-plan "$step_plan" --model resnet50 --gpus 12 2>&1)
DETAIL="$readback"
check "layerplan check-plan reads the step's plan back" contains "$readback" "a valid plan"
DETAIL="$(diff <(grep -v '"seconds":' "$batch_plan") <(grep -v '"seconds":' "$step_plan") | head -5)"
check "the step's plan equals the batch script's (but for the search time)" test -z "$DETAIL"
DETAIL="$(ls -a "$WORK")"
check "no temporary plan files are left" test -z "$(find "$WORK" -name '.layerplan-*' ! -name '*.lock' ! -name '*.done')"
# The working directory is the user's and shared by the nodes: one plans, two take its plan.
origins=$(grep "^layerplan: job $MAIN_JOB\.0 node [0-9]*: " <<<"$OUT")
DETAIL="origin lines: $origins"
check "the step plans once: one node 'planned here', two 'plan from node N'" \
  eval '[ "$(grep -c ": planned here$" <<<"$origins")" -eq 1 ] && [ "$(grep -c ": plan from node [0-9] (" <<<"$origins")" -eq 2 ]'
DETAIL="$(ls -a "$WORK")"
check "the step left one lock and one done marker" \
  test "$(find "$WORK" -name ".layerplan-$MAIN_JOB.0.*.lock" -o -name ".layerplan-$MAIN_JOB.0.*.done" | wc -l)" -eq 2
check "nodes idle after the job" nodes_idle

# The time the plugin added on each node (slurmd logs), for docs/BENCHMARKS.md.
timings=$(grep -h "layerplan: job $MAIN_JOB\.0 node [0-9]*: topology" "$ROOT"/log/slurmd-n*.log | sed 's/.*\(node [0-9]*\): topology \([0-9.]*\) ms, plan \([0-9.]*\) ms, write \([0-9.]*\) ms.*/\1 \2 \3 \4/')
echo "# plugin time at start of job $MAIN_JOB step 0 (node, topology ms, plan ms, write ms):"
sed 's/^/#   /' <<<"$timings"
worst=$(awk '{ t = $3 + $4 + $5; if (t > m) m = t } END { print m + 0 }' <<<"$timings")
DETAIL="timings: $timings"
check "three nodes logged their timings; the slowest added ${worst} ms (< 1000 ms)" \
  eval '[ "$(grep -c node <<<"$timings")" -eq 3 ] && awk -v w="$worst" "BEGIN { exit !(w > 0 && w < 1000) }"'

# ---- 3b. A plan folder on each node's own disk: every node plans ---------------------------
# $ROOT/local is a tmpfs per node (scripts/slurm-cluster: each slurmd in its own mount namespace).
set_plugstack plan_dir="$ROOT/local"
script local.sh <<'EOF'
#!/bin/bash
srun -N3 --ntasks-per-node=1 bash -c 'echo "local: $SLURMD_NODENAME|$LAYERPLAN_PLAN|$(test -s "$LAYERPLAN_PLAN" && echo readable)"'
EOF
run_job -N3 --gpus-per-node=4 --layerplan=auto --layerplan-model=resnet50 local.sh
origins=$(grep "^layerplan: job $JOB\.0 node [0-9]*: " <<<"$OUT")
DETAIL="node-local disks: $(cat "$ROOT/run/node-local-disks" 2>/dev/null); state $STATE, output: $OUT"
check "node-local plan folders: each of the three nodes plans ('planned here' three times)" \
  eval '[ "$STATE" = COMPLETED ] && [ "$(grep -c ": planned here$" <<<"$origins")" -eq 3 ] && ! grep -q "plan from" <<<"$origins"'
check "node-local plan folders: every task reads its node's plan file" \
  test "$(grep -c '^local: n[1-3]|.*|readable$' <<<"$OUT")" -eq 3
check "nodes idle after the node-local job" nodes_idle
restore_config

# ---- 4. #SBATCH lines, and an srun inside with its own mode ------------------------------
script sbatch_lines.sh <<'EOF'
#!/bin/bash
#SBATCH -N1
#SBATCH --gpus-per-node=2
#SBATCH --layerplan=layerwise
#SBATCH --layerplan-model=alexnet
#SBATCH --layerplan-batch=64
echo "batch: $LAYERPLAN_MODE|$LAYERPLAN_SUMMARY"
srun bash -c 'echo "inner: $LAYERPLAN_MODE"'
srun --layerplan=data bash -c 'echo "data: $LAYERPLAN_MODE|$LAYERPLAN_SUMMARY"'
EOF
run_job sbatch_lines.sh
DETAIL="state $STATE, output: $OUT"
check "#SBATCH --layerplan lines apply to the batch script" \
  eval '[ "$STATE" = COMPLETED ] && grep -q "^batch: layerwise|alexnet .*batch 64" <<<"$OUT"'
check "an srun inside inherits the #SBATCH mode" contains "$OUT" "inner: layerwise"
check "srun --layerplan=data inside overrides it" eval 'grep -q "^data: data|alexnet data parallel" <<<"$OUT"'

# ---- 5. Flag absent: the admin's default; --layerplan=off: the environment untouched ------
script env.sh <<'EOF'
#!/bin/bash
env | grep -E '^LAYERPLAN_(PLAN|MODE|STEP_MS|SUMMARY)=' | sort
echo "plan files: $(ls layerplan-$SLURM_JOB_ID.* 2>/dev/null | wc -l)"
EOF
run_job -N1 --gpus-per-node=4 env.sh
DETAIL="state $STATE, output: $OUT"
check "out of the box (default_mode off) a job without the flag is untouched" \
  eval '[ "$STATE" = COMPLETED ] && ! grep -q LAYERPLAN_ <<<"$OUT" && grep -q "plan files: 0" <<<"$OUT"'
set_plugstack default_mode=auto default_model=alexnet
run_job -N1 --gpus-per-node=4 env.sh
DETAIL="state $STATE, output: $OUT"
check "with default_mode=auto a job without the flag gets the admin's default plan" \
  eval '[ "$STATE" = COMPLETED ] && grep -q "^LAYERPLAN_MODE=auto" <<<"$OUT" && grep -q "^LAYERPLAN_SUMMARY=alexnet" <<<"$OUT"'
run_job -N1 --gpus-per-node=4 --layerplan=off env.sh
DETAIL="state $STATE, output: $OUT"
check "--layerplan=off leaves the environment untouched and writes no plan" \
  eval '[ "$STATE" = COMPLETED ] && ! grep -q LAYERPLAN_ <<<"$OUT" && grep -q "plan files: 0" <<<"$OUT"'
run_job --export=NONE -N1 --gpus-per-node=2 --layerplan=data --layerplan-model=alexnet --layerplan-batch=64 env.sh
DETAIL="state $STATE, output: $OUT"
check "sbatch --export=NONE: the batch script still gets the job's options" \
  eval '[ "$STATE" = COMPLETED ] && grep -q "^LAYERPLAN_MODE=data" <<<"$OUT" && grep -q "^LAYERPLAN_SUMMARY=alexnet data parallel.*batch 64" <<<"$OUT"'
set_plugstack allowed_modes=data,off
refused_out=$(as_user sbatch --layerplan=auto --wrap true 2>&1)
DETAIL="$refused_out"
check "a mode outside the admin's allowed_modes is refused at submission" contains "$refused_out" "'auto' is not allowed on this cluster"
restore_config

# ---- 6. --layerplan-explain and a plan file given as is ----------------------------------
run_job -N1 --gpus-per-node=2 --layerplan=auto --layerplan-model=alexnet --layerplan-explain env.sh
DETAIL="state $STATE, output: $OUT"
check "--layerplan-explain prints the plan table once into the job's output" \
  eval '[ "$STATE" = COMPLETED ] && [ "$(grep -c "compute ms" <<<"$OUT")" -eq 1 ] && grep -q "^conv1 " <<<"$OUT"'
check "--layerplan-explain writes the HTML report next to the plan file and says where" \
  eval 'grep -q "layerplan: report written to /.*\.html" <<<"$OUT"'
cp "$step_plan" "$WORK/given.json" && chown "$TEST_USER" "$WORK/given.json"
run_job -N3 --gpus-per-node=4 --layerplan="$WORK/given.json" env.sh
DETAIL="state $STATE, output: $OUT"
check "--layerplan=PLANFILE is checked and used as is" \
  eval '[ "$STATE" = COMPLETED ] && grep -q "^LAYERPLAN_MODE=file" <<<"$OUT" && grep -q "from plan file" <<<"$OUT"'
run_job -N2 --gpus-per-node=4 --layerplan="$WORK/given.json" env.sh
DETAIL="state $STATE, output: $OUT"
check "a plan file for 12 GPUs fails a job on 8, saying why" \
  eval '[ "$STATE" = FAILED ] && grep -q "does not fit this job" <<<"$OUT"'
check "nodes idle after the failed job" nodes_idle

# ---- 7. Failures fail the job cleanly and leave every node idle --------------------------
printf '[slurm]\ndefault_mode = "sometimes"\n' >"$ROOT/layerplan.toml"
run_job -N1 --gpus-per-node=4 --layerplan=auto env.sh
DETAIL="state $STATE, output: $OUT"
check "a broken admin config fails a job that asks for layerplan, naming file and value" \
  eval '[ "$STATE" = FAILED ] && grep -q "layerplan.toml:2:" <<<"$OUT" && grep -q sometimes <<<"$OUT"'
check "nodes idle after the broken config" nodes_idle
run_job -N1 --gpus-per-node=4 env.sh
DETAIL="state $STATE, output: $OUT"
check "a broken admin config leaves jobs that did not ask running, with a warning" \
  eval '[ "$STATE" = COMPLETED ] && grep -q "layerplan is off for this job" <<<"$OUT" && ! grep -q LAYERPLAN_ <<<"$OUT"'
restore_config

"$LAYERPLAN" models --export alexnet >"$WORK/mine.json" && chown "$TEST_USER" "$WORK/mine.json"
JOB=$(as_user sbatch --parsable --hold -o "$WORK/out-%j.txt" -N1 --gpus-per-node=4 --layerplan=auto \
  --layerplan-model="$WORK/mine.json" env.sh 2>&1)
chmod 000 "$WORK/mine.json"
as_user scontrol release "$JOB" >/dev/null 2>&1
deadline=$((SECONDS + 90))
while squeue -h -j "$JOB" 2>/dev/null | grep -q . && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
STATE=$(scontrol show job "$JOB" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
OUT=$(cat "$WORK/out-$JOB.txt" 2>/dev/null)
DETAIL="job $JOB state $STATE, output: $OUT"
check "a model file unreadable at job start fails the job, naming it" \
  eval '[ "$STATE" = FAILED ] && contains "$OUT" "model file '"'"'$WORK/mine.json'"'"' cannot be read"'
check "nodes idle after the unreadable model" nodes_idle

run_job -N3 --gpus-per-node=4 --layerplan=auto --layerplan-batch=7 env.sh
DETAIL="state $STATE, output: $OUT"
check "an unsatisfiable request (batch 7 on 12 GPUs) fails the job, saying why" \
  eval '[ "$STATE" = FAILED ] && grep -q "layerplan: .*batch 7" <<<"$OUT"'
check "nodes idle after the unsatisfiable request" nodes_idle

# ---- 8. Nodes with different GPUs fail the step, naming the difference --------------------
# Without topology_xml each slurmd's own LAYERPLAN_TOPOLOGY_XML is read: n3 has A100s.
set_plugstack topology_xml=
script mixed.sh <<'EOF'
#!/bin/bash
srun -N3 --ntasks-per-node=1 bash -c 'echo "ran on $SLURMD_NODENAME"'
EOF
run_job -N3 --gpus-per-node=4 --layerplan=auto mixed.sh
# The failing node says why in the job output from task_init. Once (CI, 2026-12-06) the step
# failed on n3 without that line in the output while the other two nodes' tasks had already
# run: srun's kill-on-bad-exit ended the step first. The reason then stands in the node's
# slurmd log, which is checked instead, and the test says so.
names_both() { grep "planned differently" <<<"$1" | grep A100 | grep -q H100; }
reason=$OUT
if [ "$STATE" = FAILED ] && ! names_both "$OUT"; then
  reason=$(grep -h "layerplan: job $JOB\.0 node [0-9]*: error after" "$ROOT"/log/slurmd-n*.log)
  echo "# the reason is not in the job output; slurmd's log: $reason"
fi
DETAIL="state $STATE, output: $OUT"
check "an srun over nodes with H100 and A100 GPUs fails, naming both" \
  eval '[ "$STATE" = FAILED ] && names_both "$reason"'
check "nodes idle after the mixed-GPU job" nodes_idle
restore_config

echo "# $checks checks, $failures failed, $((SECONDS - start)) s"
[ $failures -eq 0 ]
