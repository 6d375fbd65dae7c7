#!/usr/bin/env bash
# test_install.sh - make install into a DESTDIR and into a PREFIX of a
# temporary directory, then use what was installed, and only that: the
# installed shiro starts the installed shirod, which runs the installed
# workers, and the helpers come from PREFIX/libexec/shiro (PATH holds
# none of them, SHIRO_LIBEXEC is not set).  The man pages render without
# a warning, the systemd user unit's command serves in the foreground,
# and make uninstall takes every file away again.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
shiro=$(realpath "${SHIRO_BIN:-$here/build/shiro}")
tmp=$(mktemp -d)
pids=()
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
# The make that runs this test must not lend its jobserver to the one
# this test runs.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES SHIRO_ENDPOINT SHIRO_LIBEXEC

if [ "$(dirname "$shiro")" != "$here/build" ]; then
	skip install "the test installs build/, not $(dirname "$shiro")"
	exit 0
fi
if ! make -C "$here" -q build-all >/dev/null 2>&1; then
	skip install "build/ is not up to date (make builds it first)"
	exit 0
fi

# run_installed PREFIX ARGS...: the installed shiro with a bare
# environment: no build/ on PATH, no SHIRO_LIBEXEC.
run_installed() {
	local prefix=$1
	shift
	env -i PATH=/usr/bin:/bin HOME="$tmp" SHIRO_HOME="$SHIRO_HOME" \
		"$prefix/bin/shiro" "$@"
}
# exe_of PID: the program a process runs.
exe_of() { readlink "/proc/$1/exe" 2>/dev/null; }

dest=$tmp/dest
if make -C "$here" --no-print-directory install DESTDIR="$dest" >"$tmp/make.out" 2>&1; then
	ok install_into_destdir
else
	no install_into_destdir "$(tail -5 "$tmp/make.out")"
	exit 0
fi
p=$dest/usr/local
bad=""
for f in bin/shiro bin/shirod bin/shiro-worker libexec/shiro/shiro-client libexec/shiro/shiro-store \
	libexec/shiro/shiro-jail libexec/shiro/shiro-tool-worker libexec/shiro/shiro-fs-worker \
	libexec/shiro/shiro-model-worker libexec/shiro/shiro-plan; do
	[ -x "$p/$f" ] || bad="$bad [$f]"
done
for f in share/man/man1/shiro.1 share/man/man1/shirod.1 lib/systemd/user/shirod.service; do
	[ -f "$p/$f" ] || bad="$bad [$f]"
done
grep -qx "ExecStart=/usr/local/bin/shirod" "$p/lib/systemd/user/shirod.service" ||
	bad="$bad [ExecStart: $(grep ExecStart "$p/lib/systemd/user/shirod.service")]"
if [ -z "$bad" ]; then ok install_puts_programs_in_bin_and_libexec; else no install_puts_programs_in_bin_and_libexec "missing:$bad"; fi

# The installed shiro starts the installed shirod, which runs the
# installed workers; the message is summarized and shows in the memory.
export SHIRO_HOME=$tmp/home
out=$(run_installed "$p" send "installed hello" 2>"$tmp/err")
rc=$?
status=$(run_installed "$p" --no-start status --json 2>/dev/null)
dpid=$(echo "$status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null)
[ -n "$dpid" ] && pids+=("$dpid")
why=""
[ $rc -eq 0 ] && [ "$out" = 0 ] || why="$why [send rc=$rc out=$out $(head -c 200 "$tmp/err")]"
[ -n "$dpid" ] && [ "$(exe_of "$dpid")" = "$p/bin/shirod" ] || why="$why [shirod runs $(exe_of "${dpid:-0}")]"
workers=$(echo "$status" | python3 -c 'import json,sys; print(" ".join(str(w["pid"]) for w in json.load(sys.stdin)["workers"] if w.get("pid")))' 2>/dev/null)
[ -n "$workers" ] || why="$why [no worker pids]"
for w in $workers; do
	case "$(exe_of "$w")" in
	"$p/libexec/shiro/shiro-"*-worker) ;;
	*) why="$why [worker $w runs $(exe_of "$w")]" ;;
	esac
done
for _ in $(seq 100); do
	run_installed "$p" memory 2>/dev/null | grep -q '^0+1|installed hello$' && break
	sleep 0.1
done
run_installed "$p" memory 2>/dev/null | grep -q '^0+1|installed hello$' || why="$why [memory: $(run_installed "$p" memory 2>&1 | tail -2)]"
if [ -z "$why" ]; then ok installed_shiro_runs_installed_shirod_and_workers; else no installed_shiro_runs_installed_shirod_and_workers "$why"; fi

# The helpers come from libexec: fsck (shiro-store), tool (the tool worker).
why=""
run_installed "$p" fsck >"$tmp/fsck.out" 2>&1 || why="$why [fsck: $(tail -2 "$tmp/fsck.out")]"
echo "x" >"$tmp/f.txt"
run_installed "$p" tool read_file '{"path":"f.txt"}' --workspace "$tmp" >"$tmp/tool.out" 2>&1 ||
	why="$why [tool: $(head -c 200 "$tmp/tool.out")]"
run_installed "$p" stop >/dev/null 2>&1 || why="$why [stop]"
# The remote worker's launcher runs from bin (its key pair made on first use).
key=$(env -i PATH=/usr/bin:/bin HOME="$tmp" "$p/bin/shiro-worker" --show-key --home "$tmp/wk" 2>&1)
[ ${#key} -eq 40 ] || why="$why [shiro-worker --show-key: $key]"
if [ -z "$why" ]; then ok installed_helpers_come_from_libexec; else no installed_helpers_come_from_libexec "$why"; fi

# The man pages render, without a warning.
if command -v groff >/dev/null; then
	warn=$(for m in "$p"/share/man/man1/*.1; do groff -man -ww -z -Tutf8 "$m" 2>&1; done)
	if [ -z "$warn" ]; then ok man_pages_render_cleanly; else no man_pages_render_cleanly "$warn"; fi
else
	skip man_pages_render_cleanly "groff is missing (make deps installs groff-base)"
fi

# A PREFIX without DESTDIR: the unit names that PREFIX's shirod and
# systemd-analyze accepts it; its command, run as the unit runs it
# (foreground, SHIRO_HOME from its Environment line), serves until
# shiro stop, then exits 0.
q=$tmp/prefix
make -C "$here" --no-print-directory install PREFIX="$q" >"$tmp/make.out" 2>&1 || no install_into_prefix "$(tail -3 "$tmp/make.out")"
unit=$q/lib/systemd/user/shirod.service
if command -v systemd-analyze >/dev/null; then
	if MANPATH=$q/share/man systemd-analyze verify "$unit" >"$tmp/verify.out" 2>&1; then
		ok systemd_unit_verifies
	else
		no systemd_unit_verifies "$(head -c 300 "$tmp/verify.out")"
	fi
else
	skip systemd_unit_verifies "systemd-analyze is missing"
fi
cmd=$(sed -n 's/^ExecStart=//p' "$unit")
env_home=$(sed -n 's/^Environment=SHIRO_HOME=//p' "$unit")
export SHIRO_HOME=${env_home//%h/$tmp/unit}
mkdir -p "$tmp/unit"
env -i PATH=/usr/bin:/bin HOME="$tmp/unit" SHIRO_HOME="$SHIRO_HOME" $cmd >"$tmp/unit.log" 2>&1 </dev/null &
upid=$!
pids+=("$upid")
served=0
for _ in $(seq 200); do
	run_installed "$q" --no-start status >/dev/null 2>&1 && { served=1; break; }
	kill -0 "$upid" 2>/dev/null || break
	sleep 0.05
done
run_installed "$q" send "from the unit" >/dev/null 2>&1
run_installed "$q" stop >/dev/null 2>&1
wait "$upid"
urc=$?
if [ "$cmd" = "$q/bin/shirod" ] && [ $served -eq 1 ] && [ $urc -eq 0 ] &&
	[ "$SHIRO_HOME" = "$tmp/unit/.shiro" ] && [ -s "$SHIRO_HOME/chat/view.json" ]; then
	ok systemd_unit_command_serves_in_the_foreground
else
	no systemd_unit_command_serves_in_the_foreground "cmd=$cmd served=$served exit=$urc home=$SHIRO_HOME: $(tail -3 "$tmp/unit.log")"
fi

# make uninstall takes every installed file away.
make -C "$here" --no-print-directory uninstall DESTDIR="$dest" >/dev/null 2>&1
make -C "$here" --no-print-directory uninstall PREFIX="$q" >/dev/null 2>&1
left=$(find "$dest" "$q" -type f | head -5)
if [ -z "$left" ] && [ ! -e "$p/libexec/shiro" ]; then
	ok uninstall_removes_every_file
else
	no uninstall_removes_every_file "left: $left"
fi
exit 0
