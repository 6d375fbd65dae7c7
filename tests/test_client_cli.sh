#!/usr/bin/env bash
# test_client_cli.sh - shiro's command line without a daemon: help on
# every command, exit codes of bad usage, a daemon that is missing, stale
# or hung, and the arguments handed to the helper programs.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
shiro=$(realpath "${SHIRO_BIN:-$here/build/shiro}")
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
export SHIRO_HOME=$tmp/home
unset SHIRO_ENDPOINT SHIRO_LIBEXEC
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }

if [ ! -x "$shiro" ]; then
	echo "FAIL cli_binary: $shiro is not built"
	exit 1
fi

# run_rc CMD...: run with stdin from /dev/null, keep stdout/stderr, set rc.
run_rc() {
	"$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# Every command answers --help (and 'help CMD') with its usage, exit 0.
bad=""
for c in send status memory zoom log notes todos stop fsck export import run doctor tool help; do
	run_rc "$shiro" "$c" --help
	if [ $rc -ne 0 ] || ! grep -q "^usage: shiro $c" "$tmp/out"; then bad="$bad $c(--help rc=$rc)"; fi
	run_rc "$shiro" help "$c"
	if [ $rc -ne 0 ] || ! grep -q "^usage: shiro $c" "$tmp/out"; then bad="$bad $c(help rc=$rc)"; fi
done
run_rc "$shiro" --help
if [ $rc -ne 0 ] || ! grep -q "Exit codes" "$tmp/out"; then bad="$bad --help"; fi
run_rc "$shiro" -p --help
if [ $rc -ne 0 ] || ! grep -q "^usage: shiro -p" "$tmp/out"; then bad="$bad -p--help"; fi
run_rc "$shiro" --version
if [ $rc -ne 0 ] || ! grep -q "shiro/1" "$tmp/out"; then bad="$bad --version"; fi
if [ -z "$bad" ]; then ok cli_help_on_every_command; else no cli_help_on_every_command "$bad"; fi

# Bad usage: exit 2, a message on stderr that says what and where to look,
# nothing on stdout, and no daemon started.
bad=""
usage_case() {
	run_rc "$shiro" "$@"
	if [ $rc -ne 2 ]; then bad="$bad [$*: rc=$rc]"; return; fi
	if [ -s "$tmp/out" ]; then bad="$bad [$*: printed on stdout]"; fi
	if ! grep -q -- "--help" "$tmp/err"; then bad="$bad [$*: no hint]"; fi
}
usage_case bogus
usage_case --bogus
usage_case status --bogus
usage_case status extra
usage_case send --kind robot hello
usage_case --workspace /tmp status
usage_case --workspace /tmp run -- true
# run and tool against a remote shirod: a remote that is not saved, no
# workspace on that machine, --net (its jail has none), a timeout out of
# range; refused before anything is sent (nothing listens on port 9).
k='H$OIsjR9Tlkb*hmr}J]G{3Q2cMjf7OpQ%Y@+nMac'
usage_case --remote box run -- true
usage_case --endpoint tcp://127.0.0.1:9 --server-key "$k" run -- true
usage_case --endpoint tcp://127.0.0.1:9 --server-key "$k" run --net \
	--workspace /srv -- true
usage_case --endpoint tcp://127.0.0.1:9 --server-key "$k" run --timeout 0 \
	--workspace /srv -- true
usage_case --endpoint tcp://127.0.0.1:9 --server-key "$k" tool read_file \
	'{"path":"a"}'
# fsck, export, import and doctor work on this machine only.
usage_case --endpoint tcp://127.0.0.1:9 --server-key "$k" fsck
usage_case --endpoint tcp://127.0.0.1:9 --server-key "$k" export --gist "$tmp/g"
usage_case --remote box import --gist "$tmp/g"
usage_case --endpoint tcp://127.0.0.1:9 --server-key "$k" doctor
usage_case send
usage_case -p
usage_case zoom 1
usage_case zoom 3 2
usage_case zoom 4 3
usage_case zoom x 1
usage_case memory zoom 1
usage_case memory nonsense
usage_case log --tail many
usage_case log --tail
usage_case fsck extra
usage_case fsck --gist d
usage_case export
usage_case import --repair --gist d
usage_case run --net
usage_case tool onlyname
usage_case doctor extra
usage_case --home
if [ -z "$bad" ]; then ok cli_bad_usage_exits_2; else no cli_bad_usage_exits_2 "$bad"; fi
if [ ! -e "$SHIRO_HOME/run" ]; then ok cli_bad_usage_starts_nothing; else no cli_bad_usage_starts_nothing "$SHIRO_HOME/run exists"; fi

# No daemon: status, stop, anything under --no-start exit 3 at once and
# say how to start one.  (memory, zoom and log start one, as send does:
# tests/test_client_first.sh.)
bad=""
for args in "status" "--no-start memory" "--no-start memory --json" \
	"--no-start zoom 0 1" "--no-start log --tail 3" "stop" \
	"--no-start send hi" "--no-start -p hi" "--no-start"; do
	start=$(date +%s%N)
	# shellcheck disable=SC2086
	run_rc "$shiro" $args
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	if [ $rc -ne 3 ]; then bad="$bad [$args: rc=$rc]"; continue; fi
	if [ $ms -gt 1500 ]; then bad="$bad [$args: took ${ms} ms]"; fi
	if ! grep -q "shirod" "$tmp/err"; then bad="$bad [$args: no reason given]"; fi
done
if [ -z "$bad" ]; then ok cli_no_daemon_exits_3_at_once; else no cli_no_daemon_exits_3_at_once "$bad"; fi

# A stale socket (a file nobody listens on) is the same as none.
mkdir -p "$SHIRO_HOME/run"
python3 - "$SHIRO_HOME/run/shirod.sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.close()
PY
start=$(date +%s%N)
run_rc "$shiro" status
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc -eq 3 ] && [ $ms -lt 1500 ] && grep -q "nothing listens" "$tmp/err"; then
	ok cli_stale_socket_exits_3
else
	no cli_stale_socket_exits_3 "rc=$rc after ${ms} ms: $(head -c 300 "$tmp/err")"
fi

# A hung daemon (it accepts connections and never speaks) is declared
# dead after the heartbeat limit, not waited for forever.
rm -f "$SHIRO_HOME/run/shirod.sock"
python3 - "$SHIRO_HOME/run/shirod.sock" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
conns = []
end = time.time() + 30
s.settimeout(0.2)
while time.time() < end:
    try:
        conns.append(s.accept()[0])
    except OSError:
        pass
PY
pids+=($!)
for _ in $(seq 50); do [ -S "$SHIRO_HOME/run/shirod.sock" ] && break; sleep 0.1; done
start=$(date +%s%N)
run_rc timeout 20 "$shiro" status
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc -eq 3 ] && [ $ms -ge 2500 ] && [ $ms -lt 6000 ] && grep -q "did not answer" "$tmp/err"; then
	ok cli_hung_daemon_exits_3_within_seconds
else
	no cli_hung_daemon_exits_3_within_seconds "rc=$rc after ${ms} ms: $(head -c 300 "$tmp/err")"
fi
kill "${pids[-1]}" 2>/dev/null
wait "${pids[-1]}" 2>/dev/null
rm -f "$SHIRO_HOME/run/shirod.sock"

# The helper programs get the command's options and the home, in order.
lib=$tmp/libexec
mkdir -p "$lib"
for h in shiro-store shiro-jail shiro-tool-worker shirod; do
	printf '#!/bin/sh\necho "%s $*"\nexit 7\n' "$h" >"$lib/$h"
	chmod +x "$lib/$h"
done
bad=""
helper_case() {
	want=$1
	shift
	SHIRO_LIBEXEC=$lib "$shiro" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	got=$(cat "$tmp/out")
	if [ $rc -ne 7 ] || [ "$got" != "$want" ]; then bad="$bad [$*: rc=$rc got '$got']"; fi
}
helper_case "shiro-store fsck $SHIRO_HOME" fsck
helper_case "shiro-store fsck --repair $SHIRO_HOME" fsck --repair
helper_case "shiro-store fsck /x/other" --home /x/other fsck
helper_case "shiro-store export --gist $tmp/g $SHIRO_HOME" export --gist "$tmp/g"
helper_case "shiro-store import --gist g $SHIRO_HOME" import --gist g
helper_case "shiro-jail --net --timeout 5 -- ls -l --all" run --net --timeout 5 -- ls -l --all
helper_case "shiro-jail --workspace /w -- echo hi" run --workspace /w -- echo hi
helper_case "shiro-jail --doctor

shirod --home $SHIRO_HOME --doctor" doctor
helper_case "{\"jail\":shiro-jail --doctor --json,\"models\":shirod --home $SHIRO_HOME --doctor --json,\"ok\":false}" doctor --json
helper_case 'shiro-tool-worker --once read {"path":"a"} --workspace /w' tool read '{"path":"a"}' --workspace /w
if [ -z "$bad" ]; then ok cli_helpers_get_their_arguments; else no cli_helpers_get_their_arguments "$bad"; fi

# The front alone: the commands that talk to shirod belong to
# shiro-client, so without it they exit 127 and say what is missing.
mkdir -p "$tmp/bin" "$tmp/empty" "$tmp/front"
cp "$shiro" "$tmp/front/shiro"
run_rc "$tmp/front/shiro" status
if [ $rc -eq 127 ] && grep -q "shiro-client" "$tmp/err"; then
	ok cli_front_without_client_exits_127
else
	no cli_front_without_client_exits_127 "rc=$rc: $(head -c 300 "$tmp/err")"
fi

# A missing helper: exit 127 and where it was looked for.
cp "$shiro" "$tmp/bin/shiro"
cp "$(dirname "$shiro")/shiro-client" "$tmp/bin/shiro-client"
SHIRO_LIBEXEC=$tmp/empty run_rc "$tmp/bin/shiro" fsck
if [ $rc -eq 127 ] && grep -q "shiro-store" "$tmp/err" && grep -q "SHIRO_LIBEXEC" "$tmp/err"; then
	ok cli_missing_helper_exits_127
else
	no cli_missing_helper_exits_127 "rc=$rc: $(head -c 300 "$tmp/err")"
fi

# A key may start with '-' (Z85 has it): it is the key, not an option.
dkey='-wAUD[ll<+n@66OlU)O]iMu]l4FmcAc^Z>A+T2=t'
run_rc "$shiro" keys add client dashed "$dkey"
if [ $rc -eq 0 ] && grep -q "admitted client dashed" "$tmp/out" &&
	grep -qF -- "$dkey" "$SHIRO_HOME/keys/clients/dashed"* 2>/dev/null; then
	ok cli_key_starting_with_a_dash
else
	no cli_key_starting_with_a_dash "rc=$rc: $(head -c 300 "$tmp/err")"
fi

# Starting a daemon that is not there, or that dies at once: exit 3, the
# reason, and the end of its log.
run_rc "$tmp/bin/shiro" send hi
if [ $rc -eq 3 ] && grep -q "shirod was not found" "$tmp/err"; then
	ok cli_start_without_shirod_exits_3
else
	no cli_start_without_shirod_exits_3 "rc=$rc: $(head -c 300 "$tmp/err")"
fi
printf '#!/bin/sh\necho "config.json: memory.floor: must be below memory.ceiling" >&2\nexit 1\n' >"$tmp/bin/shirod"
chmod +x "$tmp/bin/shirod"
start=$(date +%s%N)
run_rc "$tmp/bin/shiro" send hi
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc -eq 3 ] && [ $ms -lt 3000 ] && grep -q "memory.floor" "$tmp/err" &&
	grep -q "memory.floor" "$SHIRO_HOME/shirod.log"; then
	ok cli_start_of_failing_shirod_shows_its_log
else
	no cli_start_of_failing_shirod_shows_its_log "rc=$rc after ${ms} ms: $(head -c 400 "$tmp/err")"
fi
exit 0
