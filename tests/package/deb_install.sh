#!/usr/bin/env bash
# The Debian package as an admin gets it (docs/packaging.md, "How CI checks it"): builds it
# with cpack in BUILD_DIR, checks it with lintian (no error, no warning), its files, conffiles
# and dependencies, installs it with apt-get, checks the man page and bash completion, checks that Slurm ignores it until enabled and loads it once enabled, runs the
# plugin's integration test on the installed files, then removes and purges it.
#   tests/package/deb_install.sh BUILD_DIR        (as root, after scripts/build)
# Prints "ok - …" or "not ok - …" per check; exits 1 if any failed, 77 when not root.
# Installing touches /etc/slurm and Slurm's plugin folder, which the CI cluster shares: the
# script holds /tmp/slurm.lock ($LAYERPLAN_SLURM_LOCK) from installing to purging, so do not
# wrap it in flock yourself.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: deb_install.sh BUILD_DIR}" && pwd)
LOCK=${LAYERPLAN_SLURM_LOCK:-/tmp/slurm.lock}
PLUGIN_DIR=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm
ENABLED=/etc/slurm/plugstack.conf.d/layerplan.conf
EXAMPLE=$ENABLED.example
CONFFILES=(/etc/slurm/layerplan.toml "$EXAMPLE")

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: installing a Debian package needs root (CI runs this as root)"
  exit 77
fi
failures=0
ok() { echo "ok - $1"; }
fail() { failures=$((failures + 1)); echo "not ok - $1"; [ -n "${2:-}" ] && printf '    %s\n' "$2" | head -c 4000 && echo; }
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@" >/dev/null 2>&1; then ok "$name"; else fail "$name"; fi
}
start=$SECONDS
TMP=$(mktemp -d)
installed_by_us=0
enabled_by_us=0
cleanup() {
  [ $enabled_by_us -eq 1 ] && rm -f "$ENABLED"
  [ $installed_by_us -eq 1 ] && dpkg -P layerplan >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if dpkg-query -W -f='${Status}' layerplan 2>/dev/null | grep -q installed; then
  echo "not ok - a layerplan package is installed on this machine already: remove it first (dpkg -P layerplan)"
  exit 1
fi

# ---- 1. Build the package and look inside --------------------------------------------------
# cpack packs what is built (CMAKE_SKIP_INSTALL_ALL_DEPENDENCY): the command, the plugin and
# the man page made from the command's help (cmake/CliDocs.cmake); nothing to do after scripts/build.
if ! cmake --build "$BUILD" --target layerplan spank_layerplan layerplan_man_page >"$TMP/build.log" 2>&1; then
  fail "the package's targets build (layerplan, spank_layerplan, layerplan_man_page)" "$(tail -n 30 "$TMP/build.log")"
  exit 1
fi
if ! (cd "$BUILD" && cpack -G DEB >"$TMP/cpack.log" 2>&1); then
  fail "cpack -G DEB builds the package" "$(tail -n 30 "$TMP/cpack.log")"
  exit 1
fi
DEB=$(ls -t "$BUILD"/layerplan_*.deb | head -n 1)
ok "cpack -G DEB builds $(basename "$DEB") ($(du -k "$DEB" | cut -f1) KiB, $((SECONDS - start)) s)"

# lintian, as an admin or a distribution would run it: any E: or W: line fails (the I:
# lines are shown, not failed on).
if ! command -v lintian >/dev/null; then
  fail "lintian is installed (scripts/setup)"
else
  lintian --fail-on none --display-info "$DEB" >"$TMP/lintian.log" 2>&1
  if grep -q '^[EW]: ' "$TMP/lintian.log"; then
    fail "lintian reports no error and no warning" "$(grep '^[EW]: ' "$TMP/lintian.log")"
  else
    ok "lintian reports no error and no warning ($(grep -c "^I: " "$TMP/lintian.log") info tags, below)"
  fi
  grep '^I: ' "$TMP/lintian.log" | sed 's/^/# /'
fi

contents=$(dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|')
missing=""
for f in /usr/bin/layerplan "$PLUGIN_DIR/spank_layerplan.so" "${CONFFILES[@]}" \
  /usr/share/doc/layerplan/README.md /usr/share/doc/layerplan/packaging.md \
  /usr/share/doc/layerplan/copyright /usr/share/doc/layerplan/changelog.gz \
  /usr/share/man/man1/layerplan.1.gz /usr/share/bash-completion/completions/layerplan \
  /usr/share/layerplan/examples/layerplan.toml; do
  grep -qxF "$f" <<<"$contents" || missing+=" $f"
done
if [ -z "$missing" ]; then ok "the package holds the command, the plugin, the conffiles, the docs, the man page and the completion"; else
  fail "the package holds every file" "missing:$missing"; fi
no_enabled_file() { ! grep -q '^/etc/slurm/plugstack.conf.d/.*\.conf$' <<<"$contents"; }
check "no plugstack file Slurm would read is shipped (only the .example)" no_enabled_file

dpkg-deb -e "$DEB" "$TMP/control"
check "the conffiles are exactly layerplan.toml and the plugstack example" \
  diff <(printf '%s\n' "${CONFFILES[@]}") "$TMP/control/conffiles"
depends=$(dpkg-deb -f "$DEB" Depends)
# The Slurm release (major.minor) of the headers it was built with, any Debian revision.
release=$(dpkg-query -W -f='${Version}' libslurm-dev | grep -oE '^[0-9]+\.[0-9]+')
next="${release%%.*}.$(printf '%02d' $((10#${release#*.} + 1)))"
slurm_range="slurm-wlm-basic-plugins (>= $release), slurm-wlm-basic-plugins (<< $next~)"
check "Depends asks for Slurm $release, any revision: $slurm_range" grep -qF "$slurm_range" <<<"$depends"
security_update() { dpkg --compare-versions "$release.99-9+deb12u99" ge "$release" && dpkg --compare-versions "$release.99-9+deb12u99" lt "$next~"; }
check "a later $release upload (such as a security update) is in the range" security_update
shlib_depends() { grep -q 'libhwloc15' <<<"$depends" && grep -q 'libdnnl' <<<"$depends" && grep -q 'libc6' <<<"$depends"; }
check "Depends names the libraries dpkg-shlibdeps found (hwloc, oneDNN, libc)" shlib_depends

# ---- 2. Install (holding the Slurm lock from here to the purge) ----------------------------
exec 9>"$LOCK"
if ! flock -n 9; then
  echo "# waiting for $LOCK (the CI Slurm cluster is in use)"
  flock -w 900 9 || { fail "got $LOCK within 15 minutes"; exit 1; }
fi
if [ -e "$ENABLED" ]; then
  fail "$ENABLED is absent before the test" "it exists: a cluster or an admin uses it; not touching it"
  exit 1
fi
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$DEB" >"$TMP/apt.log" 2>&1; then
  fail "apt-get install ./$(basename "$DEB")" "$(tail -n 30 "$TMP/apt.log")"
  exit 1
fi
installed_by_us=1
ok "apt-get install ./$(basename "$DEB")"
command_runs() { grep -q resnet50 <<<"$(/usr/bin/layerplan models)"; }
check "/usr/bin/layerplan runs" command_runs
check "the plugin is in Slurm's PluginDir" test -f "$PLUGIN_DIR/spank_layerplan.so"
conffiles_known() { grep -q layerplan.conf.example <<<"$(dpkg-query -W -f='${Conffiles}' layerplan)"; }
check "dpkg knows the conffiles" conffiles_known
# Outputs are read whole before grep -q: with pipefail, a writer cut off by SIGPIPE would fail.
man_finds_it() { [ "$(man -w layerplan)" = /usr/share/man/man1/layerplan.1.gz ] && grep -q -- --topology-xml <<<"$(man -P cat layerplan)"; }
if grep -rqs 'path-exclude=/usr/share/man' /etc/dpkg/dpkg.cfg.d/; then
  ok "man layerplan shows the installed page # SKIP dpkg excludes /usr/share/man on this machine"
else
  check "man layerplan shows the installed page" man_finds_it
fi
# The installed completion with the installed command, in a plain bash.
completes() {
  # shellcheck disable=SC2016
  bash -c 'source /usr/share/bash-completion/completions/layerplan
    COMP_WORDS=(layerplan plan --precision b); COMP_CWORD=3; _layerplan; [ "${COMPREPLY[*]}" = bf16 ] || exit 1
    COMP_WORDS=(layerplan plan --model resnet1); COMP_CWORD=3; _layerplan; [ "${COMPREPLY[*]}" = resnet101 ]'
}
check "the installed bash completion completes with the installed command" completes

# ---- 3. Slurm ignores it until enabled: sbatch --help with a slurm.conf of our own ----------
# (Debian's /etc/slurm/plugstack.conf, the installed plugin folder, no daemon needed.)
printf 'ClusterName=probe\nSlurmctldHost=localhost\nPlugStackConfig=/etc/slurm/plugstack.conf\n' >"$TMP/slurm.conf"
sbatch_help() { SLURM_CONF=$TMP/slurm.conf sbatch --help 2>&1; }
no_flags() { ! grep -q -- --layerplan <<<"$(sbatch_help)"; }
check "installed but not enabled: sbatch --help has no --layerplan" no_flags
cp "$EXAMPLE" "$ENABLED" && enabled_by_us=1
help=$(sbatch_help)
if grep -q -- "--layerplan=" <<<"$help" && ! grep -q "spank:" <<<"$help"; then
  ok "enabled (the example copied to layerplan.conf): sbatch --help lists --layerplan"
else
  fail "enabled: sbatch --help lists --layerplan" "$help"
fi
rm -f "$ENABLED" && enabled_by_us=0

# ---- 4. The plugin's integration test on the installed files --------------------------------
# plugin_integration.sh takes a build folder; this one holds links to the installed files.
mkdir -p "$TMP/installed/spank_plugin"
ln -s "$PLUGIN_DIR/spank_layerplan.so" "$TMP/installed/spank_plugin/spank_layerplan.so"
ln -s /usr/bin/layerplan "$TMP/installed/layerplan"
if "$REPO/tests/slurm/plugin_integration.sh" "$TMP/installed" >"$TMP/integration.log" 2>&1; then
  ok "the plugin's integration test passes with the installed plugin and command ($(grep -c '^ok - ' "$TMP/integration.log") checks)"
else
  fail "the plugin's integration test passes with the installed files" "$(grep -v '^ok - ' "$TMP/integration.log" | tail -n 40)"
fi

# ---- 5. Remove, then purge ------------------------------------------------------------------
cp "$EXAMPLE" "$ENABLED" && enabled_by_us=1  # an admin who forgot to disable it first
dpkg -r layerplan >"$TMP/dpkg.log" 2>&1 || fail "dpkg -r layerplan" "$(cat "$TMP/dpkg.log")"
programs_gone() { [ ! -e /usr/bin/layerplan ] && [ ! -e "$PLUGIN_DIR/spank_layerplan.so" ] && [ ! -e /usr/share/doc/layerplan/README.md ]; }
check "dpkg -r removes the command, the plugin and the docs" programs_gone
check "dpkg -r keeps the conffiles" test -f "${CONFFILES[0]}" -a -f "${CONFFILES[1]}"
help=$(sbatch_help; echo "rc=$?")
if grep -q "rc=0" <<<"$help" && grep -q "Dlopen of plugin file failed" <<<"$help"; then
  ok "an enabled line left after dpkg -r: sbatch warns and goes on (optional)"
else
  fail "an enabled line left after dpkg -r: sbatch warns and goes on" "$help"
fi
rm -f "$ENABLED" && enabled_by_us=0
dpkg -P layerplan >"$TMP/dpkg.log" 2>&1 || fail "dpkg -P layerplan" "$(cat "$TMP/dpkg.log")"
installed_by_us=0
check "dpkg -P removes the conffiles" test ! -e "${CONFFILES[0]}" -a ! -e "${CONFFILES[1]}"
check "dpkg -P leaves Debian's plugstack.conf alone" grep -qx 'include /etc/slurm/plugstack.conf.d/\*.conf' /etc/slurm/plugstack.conf

echo "# $((SECONDS - start)) s"
[ $failures -eq 0 ]
