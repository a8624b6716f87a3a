#!/usr/bin/env bash
# The bash completion (cli/completion.bash) against the built command: sourced in a plain
# bash, it offers every command and every flag of each command's --help, completes a few
# prefixes as a user would type them, and its tables of words, file flags and folder flags
# name only flags that exist; each word flag's words are exactly those layerplan accepts
# (asked as `layerplan CMD --flag WORD --help`, which checks the value and runs nothing), and
# no word flag is missing from the table.
#   tests/package/completion.sh BUILD_DIR
# Prints "ok - …" or "not ok - …" per check; exits 1 if any failed.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "${1:?usage: completion.sh BUILD_DIR}" && pwd)/layerplan
[ -x "$BIN" ] || { echo "not ok - $BIN is not built"; exit 1; }
# shellcheck source=../../cli/completion.bash
source "$REPO/cli/completion.bash"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1  # file names are completed here, away from the repository's
failures=0
ok() { echo "ok - $1"; }
fail() { failures=$((failures + 1)); echo "not ok - $1"; [ -n "${2:-}" ] && printf '    %s\n' "$2"; }

# complete WORD...: what completing the last word offers, one a line, sorted.
complete_words() {
  COMP_WORDS=("$BIN" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _layerplan
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect() {  # expect "WORDS OFFERED" WORD...
  local want got
  want=$(tr ' ' '\n' <<<"$1" | sort)
  shift
  got=$(complete_words "$@")
  if [ "$got" = "$want" ]; then ok "layerplan $* <TAB> offers $(echo $want)"; else
    fail "layerplan $* <TAB> offers $(echo $want)" "got: $(echo $got)"; fi
}

# ---- every command and flag of the help is offered ----------------------------------------
# Read from the help here with its own parsing, not the completion's.
commands=$("$BIN" --help | sed -n '/^Subcommands:/,/^$/p' | awk '/^  [a-z]/ { print $1 }')
[ -n "$commands" ] || fail "layerplan --help lists commands"
expect "$(echo $commands)" ""
expect "--help --version" -
missing=""
for command in $commands; do
  flags=$("$BIN" "$command" --help | sed -n '/^Options:/,/^$/p' | grep -oE '^  -[^ ]+' |
    sed 's/{[^}]*}//' | tr ',' '\n' | tr -d ' ')
  offered=$(complete_words "$command" -)
  for flag in $flags; do grep -qxF -- "$flag" <<<"$offered" || missing+=" $command $flag;"; done
done
if [ -z "$missing" ]; then ok "every flag of every command's --help is offered after '-'"; else
  fail "every flag of every command's --help is offered after '-'" "missing:$missing"; fi

# ---- prefixes as typed ----------------------------------------------------------------------
expect "plan predict" p
expect "check-plan" ch
expect "--precision" plan --prec
expect "fp32 tf32 bf16 fp16" plan --precision ""
expect "bf16" plan --precision = b
expect "resnet50 resnet101" plan --model res
expect "h100 h200" plan --gpu h
expect "ring ps" report --sync ""
expect "cpu gpu" launch --backend ""
expect "constant cosine step" train --lr-schedule ""
expect "adamw sgd" train --optimizer ""
expect "--no-scaling" report --no
touch "$TMP/plan.json" "$TMP/plain.toml"
mkdir "$TMP/models"
expect "$TMP/plain.toml $TMP/plan.json" plan --json "$TMP/pl"
expect "$TMP/plan.json" report "$TMP/plan"
expect "$TMP/models" check-plan --model-path "$TMP/"
expect "synthetic" train --data s
expect "$TMP/plain.toml $TMP/plan.json" train --data "$TMP/p"
expect "" plan --gpus ""  # a number: nothing to offer
launched=$(complete_words launch --nproc 2 -- bas)
if grep -qx bash <<<"$launched"; then ok "layerplan launch ... -- bas<TAB> offers commands (bash)"; else
  fail "layerplan launch ... -- bas<TAB> offers commands (bash)" "got: $(echo $launched)"; fi

# ---- the tables are true to the command -----------------------------------------------------
# accepted COMMAND FLAG VALUE: the exit status of `layerplan COMMAND FLAG VALUE --help` and
# what it printed on stderr.
accepted() { { "$BIN" "$1" "$2" "$3" --help >/dev/null; } 2>&1; }
for key in "${!_layerplan_values[@]}"; do
  command=${key%%:*} flag=${key#*:}
  # The help read whole first: grep -q stops at its match, and with pipefail the writer's
  # SIGPIPE would fail the check.
  help=$("$BIN" "$command" --help)
  if ! grep -qE -- "^  (-[a-z],)?${flag}[ ,]" <<<"$help"; then
    fail "the table's $command $flag is a flag of layerplan $command"
    continue
  fi
  words=$(tr ' ' '\n' <<<"${_layerplan_values[$key]}" | grep -v '^@' | sort)
  [ -z "$words" ] && continue
  said=$(accepted "$command" "$flag" not-a-word)
  expected=$(sed -n "s/.*'not-a-word': expected //p" <<<"$said" | sed 's/ (see layerplan --help)//; s/, / /g; s/ or / /' |
    tr ' ' '\n' | grep -v '^$' | sort)
  extra=$(grep -c '^@files$' <<<"$(tr ' ' '\n' <<<"${_layerplan_values[$key]}")")
  if [ "$extra" -gt 0 ]; then  # words and files: each word accepted
    bad=""
    for word in $words; do accepted "$command" "$flag" "$word" >/dev/null || bad+=" $word"; done
    if [ -z "$bad" ]; then ok "layerplan $command $flag accepts $(echo $words)"; else
      fail "layerplan $command $flag accepts $(echo $words)" "refused:$bad"; fi
  elif [ "$expected" = "$words" ]; then
    ok "layerplan $command $flag takes exactly $(echo $words)"
  else
    fail "layerplan $command $flag takes exactly $(echo $words)" "layerplan says: $said"
  fi
done
unknown=""
# shellcheck disable=SC2154  # set by cli/completion.bash
for flag in $_layerplan_file_flags $_layerplan_dir_flags; do
  found=0
  for command in $commands; do
    help=$("$BIN" "$command" --help)
    grep -qE -- "^  (-[a-z],)?${flag}[ ,]" <<<"$help" && found=1
  done
  [ $found -eq 1 ] || unknown+=" $flag"
done
if [ -z "$unknown" ]; then ok "every file and folder flag of the tables is a flag of some command"; else
  fail "every file and folder flag of the tables is a flag of some command" "no command has:$unknown"; fi
unlisted=""
for command in $commands; do
  for flag in $("$BIN" "$command" --help | sed -n '/^Options:/,/^$/p' | grep -E '^  -[^ ]+ [A-Z]' |
    grep -oE '^  -[^ ]+' | tr ',' '\n' | tr -d ' ' | grep '^--'); do
    [ -n "${_layerplan_values[$command:$flag]+set}" ] && continue
    said=$(accepted "$command" "$flag" not-a-word)
    [[ $said == *"'not-a-word': expected "* ]] && unlisted+=" $command $flag;"
  done
done
if [ -z "$unlisted" ]; then ok "every word flag has its words in the table"; else
  fail "every word flag has its words in the table (cli/completion.bash)" "missing:$unlisted"; fi

[ $failures -eq 0 ]
