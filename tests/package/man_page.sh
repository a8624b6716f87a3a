#!/usr/bin/env bash
# layerplan(1) as the build made it (BUILD/layerplan.1.gz, scripts/man-page): compressed as
# Debian wants (gzip -9, no name, no time), rendered by man without a warning, and true to
# the built command: every command of `layerplan --help` has its section, which names each
# flag of `layerplan COMMAND --help`.
#   tests/package/man_page.sh BUILD_DIR
# Prints "ok - …" or "not ok - …" per check; exits 1 if any failed.
set -uo pipefail

BUILD=$(cd "${1:?usage: man_page.sh BUILD_DIR}" && pwd)
BIN=$BUILD/layerplan
PAGE=$BUILD/layerplan.1.gz
failures=0
ok() { echo "ok - $1"; }
fail() { failures=$((failures + 1)); echo "not ok - $1"; [ -n "${2:-}" ] && printf '    %s\n' "$2" | head -c 4000 && echo; }
[ -f "$PAGE" ] || { fail "$PAGE exists (built by the layerplan_man_page target)"; exit 1; }

# The gzip header: magic, deflate, no FNAME flag, mtime 0, XFL 2 (best compression).
header=$(head -c 10 "$PAGE" | od -An -tx1 | tr -d ' \n')
if [ "${header:0:6}" = 1f8b08 ] && [ $((0x${header:6:2} & 8)) -eq 0 ] && [ "${header:8:8}" = 00000000 ] &&
  [ "${header:16:2}" = 02 ]; then
  ok "gzip -9n: no file name, no time stamp, best compression"
else
  fail "gzip -9n: no file name, no time stamp, best compression" "header: $header"
fi

# What lintian runs (manpage-has-errors-from-man).
warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$PAGE" 2>&1 >/dev/null)
if [ -z "$warnings" ]; then ok "man --warnings -l renders it without a warning"; else
  fail "man --warnings -l renders it without a warning" "$warnings"; fi

text=$(MANWIDTH=200 man -l "$PAGE" 2>/dev/null)
commands=$("$BIN" --help | sed -n '/^Subcommands:/,/^$/p' | awk '/^  [a-z]/ { print $1 }')
[ -n "$commands" ] || fail "layerplan --help lists commands"
missing=""
for command in $commands; do
  # The command's section: from its heading to the next heading.
  section=$(awk -v heading="   layerplan $command" '
    $0 == heading { inside = 1; next }
    inside && (/^   layerplan / || /^[A-Z]/) { inside = 0 }
    inside' <<<"$text")
  if [ -z "$section" ]; then
    missing+=" section '$command';"
    continue
  fi
  for flag in $("$BIN" "$command" --help | sed -n '/^Options:/,/^$/p' | grep -oE '^  -[^ ]+' |
    sed 's/{[^}]*}//' | tr ',' '\n' | tr -d ' ' | grep -vx -- '-h\|--help'); do
    grep -qE -- "(^|[ ,])$flag( |,|$)" <<<"$section" || missing+=" $command $flag;"
  done
done
for flag in --version --help; do grep -qE -- "(^|[ ,])$flag( |,|$)" <<<"$text" || missing+=" $flag;"; done
if [ -z "$missing" ]; then ok "every command has its section naming each of its flags ($(echo $commands | wc -w) commands)"; else
  fail "every command has its section naming each of its flags" "missing:$missing"; fi
version=$("$BIN" --version | awk '{ print $1, $2 }')
if grep -qF "$version" <<<"$text"; then ok "it names $version"; else
  fail "it names $version"; fi

[ $failures -eq 0 ]
