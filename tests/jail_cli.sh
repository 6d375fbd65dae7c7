#!/usr/bin/env bash
# jail_cli.sh - shiro-jail from the command line, as `shiro run` and
# `shiro doctor` use it: output passes through, exit codes (the
# command's, 128+signal, timeout, set-up failure, missing program),
# --net, --workspace, --help, --doctor and --doctor --json, --policy.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
jail=$(realpath "${SHIRO_JAIL_BIN:-$here/build/shiro-jail}")
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }

if [ ! -x "$jail" ]; then
	no jail_cli "no $jail"
	exit 1
fi
if ! "$jail" --doctor >"$tmp/doc" 2>&1; then
	# The kernel cannot run the jail here: say so once per test.
	why=$(grep -m1 '^missing' "$tmp/doc" || echo "self-test failed")
	for t in cli_passes_output_through cli_passes_stdin cli_exit_status \
		cli_signal_status cli_timeout_status cli_missing_program \
		cli_setup_failure cli_bad_usage cli_help cli_env cli_no_workspace cli_unjailed cli_workspace \
		cli_net_switch cli_doctor cli_doctor_json cli_policy_lists; do
		echo "SKIP $t: the jail cannot run here ($why)"
	done
	exit 0
fi
ws=$tmp/ws
mkdir -p "$ws"
cd "$ws" || exit 1

out=$("$jail" -- sh -c 'echo to-out; echo to-err >&2' 2>"$tmp/err")
rc=$?
if [ $rc -eq 0 ] && [ "$out" = "to-out" ] && [ "$(cat "$tmp/err")" = "to-err" ]; then
	ok cli_passes_output_through
else
	no cli_passes_output_through "rc=$rc out='$out' err='$(cat "$tmp/err")'"
fi

echo piped | "$jail" -- sh -c 'read x; echo "got $x"' >"$tmp/out" 2>&1
if [ "$(cat "$tmp/out")" = "got piped" ]; then ok cli_passes_stdin; else no cli_passes_stdin "$(cat "$tmp/out")"; fi

"$jail" -- sh -c 'exit 42'
rc=$?
if [ $rc -eq 42 ]; then ok cli_exit_status; else no cli_exit_status "rc=$rc"; fi

"$jail" -- sh -c 'kill -KILL $$'
rc=$?
if [ $rc -eq 137 ]; then ok cli_signal_status; else no cli_signal_status "rc=$rc"; fi

start=$(date +%s%N)
"$jail" --timeout 0.3 -- sh -c 'sleep 30 & sleep 30' 2>"$tmp/err"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc -eq 124 ] && [ $ms -lt 5000 ] && grep -q 'timed out' "$tmp/err"; then
	ok cli_timeout_status
else
	no cli_timeout_status "rc=$rc after ${ms} ms"
fi

"$jail" -- /no/such/program 2>"$tmp/err"
rc=$?
if [ $rc -eq 127 ] && grep -q 'cannot run' "$tmp/err"; then ok cli_missing_program; else no cli_missing_program "rc=$rc"; fi

"$jail" --workspace "$tmp/absent" -- true 2>"$tmp/err"
rc=$?
if [ $rc -eq 125 ] && [ -s "$tmp/err" ]; then ok cli_setup_failure; else no cli_setup_failure "rc=$rc"; fi

"$jail" --bogus-flag -- true 2>/dev/null
rc=$?
if [ $rc -eq 125 ]; then ok cli_bad_usage; else no cli_bad_usage "rc=$rc"; fi

if "$jail" --help | grep -q -- '--workspace DIR'; then ok cli_help; else no cli_help "no usage text"; fi

# --env adds to the clean environment (a later one wins); nothing else
# of ours gets in.
out=$(SHIRO_CLI_SECRET=x "$jail" --env A=1 --env B=two --env A=3 -- sh -c 'echo "$A $B ${SHIRO_CLI_SECRET:-clean}"')
"$jail" --env novalue -- true 2>/dev/null
rc=$?
if [ "$out" = "3 two clean" ] && [ $rc -eq 125 ]; then ok cli_env; else no cli_env "out='$out' rc=$rc"; fi

# From a directory the jail cannot take as a workspace (/tmp, /usr), it
# runs with none.
out=$(cd /usr && "$jail" -- pwd 2>&1)
if [ "$out" = "/tmp" ]; then ok cli_no_workspace; else no cli_no_workspace "$out"; fi

# --unjailed (a person's explicit choice): the host's own view, but
# still a clean environment.
mkdir -p "$tmp/outside"
a=$("$jail" -- sh -c "test -d $tmp/outside && echo visible")
b=$(SHIRO_CLI_SECRET=x "$jail" --unjailed -- sh -c "test -d $tmp/outside && echo visible; echo \${SHIRO_CLI_SECRET:-clean}")
if [ "$a" = "" ] && [ "$b" = "$(printf 'visible\nclean')" ]; then
	ok cli_unjailed
else
	no cli_unjailed "jailed='$a' unjailed='$b'"
fi

# The workspace: the given directory is writable, others are not.
mkdir -p "$tmp/other"
"$jail" --workspace "$tmp/other" -- sh -c "echo hi > $tmp/other/f; echo no > $ws/g" 2>/dev/null
if [ -f "$tmp/other/f" ] && [ ! -e "$ws/g" ]; then ok cli_workspace; else no cli_workspace "files: $(ls "$tmp/other" "$ws")"; fi

# --net: a listener on the host is reachable only with it.
if command -v python3 >/dev/null; then
	python3 - "$tmp/port" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(20)
try:
    while True:
        c, _ = s.accept()
        c.sendall(b"hello\n")
        c.close()
except Exception:
    pass
PY
	pids+=($!)
	for _ in $(seq 100); do [ -f "$tmp/port" ] && break; sleep 0.05; done
	port=$(cat "$tmp/port" 2>/dev/null)
	probe="import socket; s = socket.create_connection(('127.0.0.1', $port), 2); print(s.recv(10).decode().strip())"
	a=$("$jail" -- python3 -c "$probe" 2>/dev/null)
	b=$("$jail" --net -- python3 -c "$probe" 2>/dev/null)
	if [ -n "$port" ] && [ "$a" = "" ] && [ "$b" = "hello" ]; then
		ok cli_net_switch
	else
		no cli_net_switch "port=$port without='$a' with='$b'"
	fi
else
	echo "SKIP cli_net_switch: no python3"
fi

if "$jail" --doctor >"$tmp/doc"; then
	if grep -q 'self-test: *ok' "$tmp/doc" && grep -q 'Landlock' "$tmp/doc"; then ok cli_doctor; else no cli_doctor "$(cat "$tmp/doc")"; fi
else
	no cli_doctor "exit $?: $(cat "$tmp/doc")"
fi
if "$jail" --doctor --json | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if d["ok"] and d["userns"] and "landlock_abi" in d else 1)'; then
	ok cli_doctor_json
else
	no cli_doctor_json "not the expected JSON"
fi

if "$jail" --policy jail | grep -q '^ptrace ' && "$jail" --policy model | grep -q '^execve '; then
	ok cli_policy_lists
else
	no cli_policy_lists "missing rows"
fi
