# The steps bench/predicted_vs_measured.sh and bench/profile_against_prediction.sh share, so
# that both plan, measure the link and refuse bad input alike. Sourced, not run; the caller
# sets `binary`, `link_bench` and `link_compute`.

# Exits 2 with a message (prefixed with the script's name $1) unless --link-compute is one
# or team and both executables exist.
check_calibration_tools() {
  case "$link_compute" in
    one | team) ;;
    *) echo "$1: --link-compute '$link_compute': expected one or team" >&2; exit 2 ;;
  esac
  local f
  for f in "$binary" "$link_bench"; do
    [ -x "$f" ] || { echo "$1: $f is missing; run scripts/build" >&2; exit 2; }
  done
}

# The rank count whose link figures price a plan of N ranks: N, or the next even count
# (the link benchmark pairs its ranks); 2 for 1 rank, which sends nothing.
link_ranks() { echo $(( $1 < 2 ? 2 : $1 + $1 % 2 )); }

# measure_link N JSON: the link benchmark's figures with N ranks (even) into JSON; its
# report on stdout.
measure_link() {
  "$binary" launch --nproc "$1" -- "$link_bench" --json "$2" --compute "$link_compute"
}

# plan_case MODEL BATCH N JSON: the planner's layer-wise plan for N devices of
# bench/cpu_like_4_devices.toml (so plans mix n, c and w splits) into JSON; its report on stdout.
# The search prices sync by parameter servers (--sync ps, the paper's model) and the
# searched plan is written (--mode layerwise): with bucket all-reduces overlapping the
# backward (the default) the planner finds plain data parallelism best on these devices,
# which would leave the layer-wise code paths these benchmarks exist for unmeasured.
plan_case() {
  "$binary" plan --model "$1" --batch "$2" --cluster bench/cpu_like_4_devices.toml --gpus "$3" \
    --gpus-per-node "$3" --sync ps --mode layerwise --json "$4"
}
