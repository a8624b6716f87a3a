# Sourced by the Slurm tests (plugin_integration.sh, pmi2_training.sh, rank_failure.sh): how
# a check reports, and the life of the 3-node cluster of scripts/slurm-cluster. The caller
# sets CLUSTER and ROOT first.

# Exits 77 (CTest's "skipped") unless root; exits 1 naming the first of the files missing.
require_root_and() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIPPED: the Slurm integration tests need root to start slurmctld, slurmd and munged (CI runs them as root)"
    exit 77
  fi
  local f
  for f in "$@"; do
    [ -f "$f" ] || { echo "not ok - $f is missing: build first (scripts/build)"; exit 1; }
  done
}

failures=0
checks=0
ok() { checks=$((checks + 1)); echo "ok - $1"; }
fail() {
  checks=$((checks + 1)); failures=$((failures + 1))
  echo "not ok - $1"
  [ -n "${2:-}" ] && printf '    %s\n' "$2" | head -c 4000 && echo
}
contains() { grep -qF -- "$2" <<<"$1"; }

# Starts the cluster with plugin $1 (stopping one an interrupted run left first) and stops
# it when the script exits; exits 1 when it does not come up. Sets `start` to the time it began.
start_cluster() {
  trap '"$CLUSTER" down >/dev/null 2>&1 || echo "warning: scripts/slurm-cluster down failed"' EXIT
  trap 'exit 130' INT TERM
  start=$SECONDS
  if [ -f "$ROOT/run/slurmctld.pid" ]; then
    echo "# a cluster left by an interrupted run is up under $ROOT: stopping it first"
    "$CLUSTER" down
  fi
  if ! "$CLUSTER" up "$1"; then
    echo "not ok - the Slurm cluster did not come up (see the lines above)"
    exit 1
  fi
  echo "# cluster up in $((SECONDS - start)) s"
}
