#!/usr/bin/env bash
# test_fsck_live.sh - shiro fsck on a home a running shirod owns: right
# after bursts of sends it reports no problem (view.json lagging the
# live view is not damage), while real damage done under the running
# daemon (a view.json that no fold gives, a broken line in the log) is
# reported; on a stopped home fsck holds the chat lock, so no shirod
# starts on the chat while it is read.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
shiro=$(realpath "${SHIRO_BIN:-$here/build/shiro}")
bin=$(dirname "$shiro")
tmp=$(mktemp -d)
unset SHIRO_ENDPOINT SHIRO_LIBEXEC
pids=()
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }

# daemon_pid - the pid of the shirod that owns $SHIRO_HOME.
daemon_pid() {
	"$shiro" --no-start status --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null
}
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

for p in shiro shirod shiro-store; do
	if [ ! -x "$bin/$p" ]; then
		echo "FAIL fsck_live: $bin/$p is not built"
		exit 1
	fi
done

# A small ceiling, so that the bursts merge and view.json keeps moving.
export SHIRO_HOME=$tmp/live
mkdir -p "$SHIRO_HOME"
echo '{"memory":{"ceiling":3000,"floor":1500,"compactionCeiling":2000,"compactionFloor":1000}}' >"$SHIRO_HOME/config.json"
"$shiro" send "the first message" >/dev/null 2>"$tmp/err" || {
	no fsck_live_after_bursts "shiro send: $(head -c 300 "$tmp/err")"
	exit 0
}
pids+=("$(daemon_pid)")
pad=$(printf 'x%.0s' $(seq 120))

# Bursts of sends, each followed at once by fsck: every check is clean,
# and at least one caught view.json behind the log (else the case this
# is about was not seen, and the test says so).
bad="" lagged=0 rounds=0
for round in $(seq 8); do
	for k in $(seq 30); do
		"$shiro" send "round $round message $k $pad" >/dev/null 2>&1 || bad="$bad [send $round.$k]"
	done
	"$shiro" fsck >"$tmp/fsck.out" 2>&1
	rc=$?
	rounds=$round
	if [ $rc -ne 0 ] || [ "$(tail -1 "$tmp/fsck.out")" != ok ]; then
		bad="$bad [round $round: rc=$rc $(grep -m3 problem "$tmp/fsck.out" | tr '\n' ' ')]"
	fi
	if ! grep -q "^shirod (pid [0-9]*) runs on this home" "$tmp/fsck.out"; then
		bad="$bad [round $round: not seen as live]"
	fi
	m=$(sed -n 's/^view.json: the same as the fold at message \([0-9]*\) of \([0-9]*\).*/\1 \2/p' "$tmp/fsck.out")
	if [ -n "$m" ] && [ "${m% *}" -lt "${m#* }" ]; then
		lagged=$((lagged + 1))
		[ $lagged -ge 2 ] && break
	fi
done
if [ -n "$bad" ]; then
	no fsck_live_after_bursts "$bad"
elif [ $lagged -eq 0 ]; then
	no fsck_live_after_bursts "in $rounds rounds view.json never lagged the log: the case was not tested ($(grep view.json "$tmp/fsck.out"))"
else
	ok fsck_live_after_bursts
fi

# Damage under a running daemon: a well-formed view.json that no fold
# gives (every message a line of its own, although batches merged).
# First wait (bounded) until view.json has caught up with the last
# message: only a new message makes the daemon write it again.
caught=0
for _ in $(seq 100); do
	"$shiro" fsck >"$tmp/fsck.out" 2>&1
	m=$(sed -n 's/^view.json: the same as the fold at message \([0-9]*\) of \([0-9]*\).*/\1 \2/p' "$tmp/fsck.out")
	if [ -n "$m" ] && [ "${m% *}" = "${m#* }" ]; then
		caught=1
		break
	fi
	sleep 0.1
done
[ $caught -eq 1 ] || no fsck_live_reports_a_false_view_json "view.json never caught up: $(grep view.json "$tmp/fsck.out")"
python3 - "$SHIRO_HOME/chat/view.json" "$("$shiro" --no-start status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["messages"])')" <<'PY'
import json, os, sys
path, n = sys.argv[1], int(sys.argv[2])
tmp = path + ".test"
with open(tmp, "w") as f:
    f.write(json.dumps([[0, i] for i in range(n)]) + "\n")
os.rename(tmp, path)
PY
"$shiro" fsck >"$tmp/fsck.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "^problem: view.json differs" "$tmp/fsck.out" &&
	grep -q "runs on this home" "$tmp/fsck.out" &&
	grep -q "^(view.json was read 3 times" "$tmp/fsck.out"; then
	ok fsck_live_reports_a_false_view_json
else
	no fsck_live_reports_a_false_view_json "rc=$rc: $(tail -5 "$tmp/fsck.out")"
fi

# A line being appended (the daemon is idle, so the test cuts it again
# before anything else writes): on a live home it is not damage.  (The
# false view.json above is still there, so only the tail is looked at.)
f=$(ls "$SHIRO_HOME"/chat/main/*.jsonl | tail -1)
size=$(stat -c %s "$f")
printf '{"i":999999,"kind":"us' >>"$f"
"$shiro" fsck >"$tmp/fsck.out" 2>&1
rc=$?
truncate -s "$size" "$f"
if grep -q "^the last line is being written by shirod" "$tmp/fsck.out" &&
	! grep -q "^problem: the last line" "$tmp/fsck.out" &&
	! grep -q "store: .* torn" "$tmp/fsck.out"; then
	ok fsck_live_takes_a_torn_tail_for_an_append
else
	no fsck_live_takes_a_torn_tail_for_an_append "rc=$rc: $(tail -5 "$tmp/fsck.out")"
fi

# Damage under a running daemon: one byte of an early log line changed.
f=$(ls "$SHIRO_HOME"/chat/main/*.jsonl | head -1)
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]
data = bytearray(open(p, "rb").read())
i = data.index(b"round 1 message 2 ")
data[i:i + 5] = b'"}{\x01x'
open(p, "r+b").write(data)
PY
"$shiro" fsck >"$tmp/fsck.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "^problem:" "$tmp/fsck.out"; then
	ok fsck_live_reports_a_broken_log_line
else
	no fsck_live_reports_a_broken_log_line "rc=$rc: $(tail -5 "$tmp/fsck.out")"
fi
"$shiro" stop >/dev/null 2>&1

# A stopped home: fsck holds the chat lock while it reads, so a shirod
# started meanwhile does not open the chat (it exits 3, as when another
# owns it).  A chat of 100,000 messages takes fsck about a second.
export SHIRO_HOME=$tmp/stopped
"$bin/shiro-store" gen 100000 "$SHIRO_HOME" >/dev/null
why="fsck never held the lock while it ran"
for attempt in 1 2 3; do
	"$shiro" fsck >"$tmp/fsck.out" 2>&1 &
	fpid=$!
	pids+=("$fpid")
	held=0
	for _ in $(seq 400); do
		if ! flock -n -x "$SHIRO_HOME/chat/lock" true 2>/dev/null; then
			held=1
			break
		fi
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.005
	done
	if [ $held -eq 1 ]; then
		timeout 20 "$bin/shirod" >"$tmp/shirod.out" 2>&1
		src=$?
		still=0
		kill -0 "$fpid" 2>/dev/null && still=1
		wait "$fpid"
		frc=$?
		if [ $still -eq 1 ] && [ $src -eq 3 ] && [ $frc -eq 0 ]; then
			why=""
			break
		fi
		if [ $still -eq 1 ]; then
			why="shirod exited $src while fsck held the lock (fsck: $frc): $(head -c 200 "$tmp/shirod.out")"
			break
		fi
		why="fsck ended before shirod tried (attempt $attempt)"
	else
		wait "$fpid"
	fi
done
if [ -z "$why" ] && "$shiro" fsck >/dev/null 2>&1; then
	ok fsck_holds_the_lock_of_a_stopped_home
else
	no fsck_holds_the_lock_of_a_stopped_home "$why"
fi
exit 0
