#!/usr/bin/env bash
# Runs every fuzz target of tests/fuzz/ for RUNS executions (default 10^6), as recorded in
# docs/BENCHMARKS.md ("Fuzzing"). Builds build-fuzz/ first (scripts/fuzz). A finding stops
# nothing: every target runs, and the script fails at the end if any found something.
#   bench/fuzz_long.sh [RUNS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000000}"
shift || true
start=$(date +%s)
scripts/fuzz -n "$runs" "$@"
echo "fuzz_long: $(( $(date +%s) - start )) s in all"
