#!/usr/bin/env bash
# test_client_daemon.sh - shiro against a real build/shirod in a temporary
# home: auto-start, ids in order, the --json documents, -p without a turn
# model, the interactive mode through a pipe and a pty, a daemon that
# hangs or dies under a client, and a session that reconnects.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
shiro=$(realpath "${SHIRO_BIN:-$here/build/shiro}")
shirod=$(dirname "$shiro")/shirod
tmp=$(mktemp -d)
export SHIRO_HOME=$tmp/home
unset SHIRO_ENDPOINT SHIRO_LIBEXEC
pids=()
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }

# daemon_pid - the pid of the shirod that owns the home (from its status).
daemon_pid() {
	"$shiro" status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null
}
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	p=$(daemon_pid)
	[ -n "$p" ] && kill "$p" 2>/dev/null
	sleep 0.2
	[ -n "$p" ] && kill -9 "$p" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -x "$shiro" ] || [ ! -x "$shirod" ]; then
	echo "SKIP client_daemon: build/shiro and build/shirod are not both built"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "SKIP client_daemon: python3 is missing"
	exit 0
fi

# Auto-start: the first send starts shirod, which logs to HOME/shirod.log.
out=$(timeout 20 "$shiro" send "first message" 2>"$tmp/err")
rc=$?
if [ $rc -eq 0 ] && [ "$out" = 0 ] && [ -S "$SHIRO_HOME/run/shirod.sock" ] && [ -s "$SHIRO_HOME/shirod.log" ]; then
	ok client_autostarts_shirod
else
	no client_autostarts_shirod "rc=$rc out='$out' $(head -c 300 "$tmp/err")"
	exit 0
fi
pid=$(daemon_pid)
pids+=("$pid")

# Two clients that race to start: both attach to the same daemon.
"$shiro" stop >/dev/null 2>&1
(timeout 20 "$shiro" send "race a" >"$tmp/ra" 2>&1) &
ra=$!
(timeout 20 "$shiro" send "race b" >"$tmp/rb" 2>&1) &
rb=$!
wait $ra; rca=$?
wait $rb; rcb=$?
pid=$(daemon_pid)
pids+=("$pid")
if [ $rca -eq 0 ] && [ $rcb -eq 0 ] && [ "$(sort -n "$tmp/ra" "$tmp/rb" | tr '\n' ' ')" = "1 2 " ]; then
	ok client_start_race_attaches_to_the_winner
else
	no client_start_race_attaches_to_the_winner "rc=$rca/$rcb: $(cat "$tmp/ra" "$tmp/rb" | head -c 300)"
fi

# send prints ids in order, one per message, and the log has them in order.
bad=""
for k in $(seq 3 22); do
	got=$("$shiro" send --kind note "note number $k" 2>>"$tmp/err")
	[ "$got" = "$k" ] || bad="$bad [$k: got '$got']"
done
got=$(printf 'from stdin\nsecond line\n' | "$shiro" send)
[ "$got" = 23 ] || bad="$bad [stdin: got '$got']"
if [ -z "$bad" ]; then ok client_send_prints_ids_in_order; else no client_send_prints_ids_in_order "$bad"; fi

# Every query prints one JSON document that parses, with the right facts.
"$shiro" status --json >"$tmp/status.json" &&
	"$shiro" memory --json >"$tmp/memory.json" &&
	"$shiro" log --tail 5 --json >"$tmp/log.json" &&
	"$shiro" zoom 3 1 --json >"$tmp/zoom.json" &&
	"$shiro" memory zoom 0 2 --json >"$tmp/zoom2.json"
rc=$?
why=$(python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def one(name):
    text = open(f"{d}/{name}").read()
    assert text.count("\n") == 1 and text.endswith("\n"), f"{name}: not one line"
    return json.loads(text)
st = one("status.json")
assert st["messages"] == 24, f"status messages {st['messages']}"
assert st["view"]["bytes"] > 0 and st["view"]["lines"] > 0, "status view"
mem = one("memory.json")
assert mem["status"]["messages"] == 24, "memory status"
ids = [l["id"] for l in mem["lines"]]
assert ids == sorted(ids) and ids[0] == 0, f"memory lines {ids}"
lg = one("log.json")
ids = [m["id"] for m in lg["log"]]
assert ids == [19, 20, 21, 22, 23], f"log ids {ids}"
assert lg["log"][-1]["text"] == "from stdin\nsecond line", repr(lg["log"][-1]["text"])
assert lg["log"][0]["kind"] == "note", lg["log"][0]["kind"]
z = one("zoom.json")
assert z["node"]["id"] == 3 and z["node"]["text"] == "note number 3", z
z2 = one("zoom2.json")
assert [p["id"] for p in z2["parts"]] == [0, 1], z2
print("ok")
PY
)
if [ $rc -eq 0 ] && [ "$why" = ok ]; then ok client_json_documents_parse; else no client_json_documents_parse "rc=$rc $why"; fi

# The same queries as text: the memory shows one ID+N line per view line.
"$shiro" memory >"$tmp/memory.txt"
if grep -q '^0+1|first message$' "$tmp/memory.txt" && grep -q '^view (' "$tmp/memory.txt"; then
	ok client_memory_text_shows_view_lines
else
	no client_memory_text_shows_view_lines "$(head -c 300 "$tmp/memory.txt")"
fi

# -p without a turn model: exit 4, the reason on stderr, the message logged.
start=$(date +%s)
timeout 60 "$shiro" -p "is anyone there" >"$tmp/p.out" 2>"$tmp/p.err"
rc=$?
"$shiro" log --tail 1 --json >"$tmp/plog.json"
if [ $rc -eq 4 ] && grep -q "no model" "$tmp/p.err" &&
	python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["log"]; sys.exit(0 if l[-1]["text"]=="is anyone there" and l[-1]["kind"]=="user" else 1)' "$tmp/plog.json"; then
	ok client_print_without_turn_model_exits_4
else
	no client_print_without_turn_model_exits_4 "rc=$rc after $(( $(date +%s) - start )) s: $(head -c 300 "$tmp/p.err")"
fi
echo "asked on stdin" | timeout 60 "$shiro" -p --json >"$tmp/pj.out" 2>"$tmp/pj.err"
rc=$?
why=$(python3 - "$tmp/pj.out" <<'PY'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
assert evs[-2]["ev"] == "error" and evs[-2]["code"] == "no_model", evs[-2]
assert evs[-1]["ev"] == "done" and evs[-1]["outcome"] == "no_model", evs[-1]
assert evs[-1]["exit"] == 4 and evs[-1]["text"] == "", evs[-1]
print("ok")
PY
)
if [ $rc -eq 4 ] && [ "$why" = ok ]; then ok client_print_json_events; else no client_print_json_events "rc=$rc $why"; fi

# Interactive through a pipe: the status line, /memory, /status, and a
# typed message logged.
printf '/memory\ntyped in a pipe\n/memory zoom 0 1\n/nonsense\n/exit\n' |
	timeout 60 "$shiro" >"$tmp/i.out" 2>"$tmp/i.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^mem [0-9.]*[BK]/128K$' "$tmp/i.out" && grep -q '^0+1|first message$' "$tmp/i.out" &&
	grep -q '^#0 user' "$tmp/i.out" && grep -q "unknown command" "$tmp/i.out" &&
	"$shiro" log --tail 1 | grep -q "typed in a pipe"; then
	ok client_interactive_pipe
else
	no client_interactive_pipe "rc=$rc: $(head -c 400 "$tmp/i.out") $(head -c 200 "$tmp/i.err")"
fi

# Interactive on a pseudo-terminal: the line editor, the status at the
# prompt's right, /memory, and the directory's history file.
mkdir -p "$tmp/proj"
why=$(cd "$tmp/proj" && python3 - "$shiro" <<'PY'
import os, pty, sys, time, select, signal
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm"
    os.execv(sys.argv[1], [sys.argv[1]])
buf = b""
def read_until(pat, secs):
    global buf
    end = time.time() + secs
    while pat not in buf and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                break
    return pat in buf
try:
    if not read_until(b"shiro> ", 20):
        print("no prompt: %r" % buf[-300:]); sys.exit(0)
    if not read_until(b"/128K", 5):
        print("no status at the prompt: %r" % buf[-300:]); sys.exit(0)
    os.write(fd, b"/memory\r")
    if not read_until(b"0+1|first message", 20):
        print("no view line: %r" % buf[-300:]); sys.exit(0)
    os.write(fd, b"/exit\r")
    end = time.time() + 10
    while time.time() < end:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p == pid:
            break
        read_until(b"\0", 0.2)
    else:
        os.kill(pid, signal.SIGKILL); print("did not exit"); sys.exit(0)
    print("ok" if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0 else "status %d" % st)
except Exception as e:
    print("error %r" % e)
PY
)
hist_hash=$(printf '%s' "$(cd "$tmp/proj" && pwd -P)" | sha256sum | cut -c1-32)
hist_hash2=$(printf '%s' "$tmp/proj" | sha256sum | cut -c1-32)
hfile=""
[ -f "$SHIRO_HOME/history/$hist_hash.json" ] && hfile=$SHIRO_HOME/history/$hist_hash.json
[ -f "$SHIRO_HOME/history/$hist_hash2.json" ] && hfile=$SHIRO_HOME/history/$hist_hash2.json
if [ "$why" = ok ] && [ -n "$hfile" ] &&
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])) == ["/memory", "/exit"] else 1)' "$hfile"; then
	ok client_interactive_pty_and_history
else
	no client_interactive_pty_and_history "$why; history: $(ls "$SHIRO_HOME/history" 2>&1) $(cat "$hfile" 2>/dev/null)"
fi

# A hung daemon (stopped with SIGSTOP): one-shot commands say so within
# a few seconds (exit 3) instead of hanging.
pid=$(daemon_pid)
kill -STOP "$pid"
start=$(date +%s%N)
timeout 30 "$shiro" status >/dev/null 2>"$tmp/h.err"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill -CONT "$pid"
if [ $rc -eq 3 ] && [ $ms -lt 6000 ] && grep -q "did not answer" "$tmp/h.err"; then
	ok client_hung_daemon_reported_within_seconds
else
	no client_hung_daemon_reported_within_seconds "rc=$rc after $ms ms: $(head -c 300 "$tmp/h.err")"
fi

# A session attached through a pipe survives a daemon restart: it says
# the daemon stopped answering, attaches again, and goes on reading.
mkfifo "$tmp/in"
timeout 60 "$shiro" <"$tmp/in" >"$tmp/r.out" 2>"$tmp/r.err" &
spid=$!
pids+=("$spid")
exec 7>"$tmp/in"
echo "/status" >&7
for _ in $(seq 100); do grep -q '^mem ' "$tmp/r.out" && break; sleep 0.1; done
pid=$(daemon_pid)
kill -9 "$pid"
start=$(date +%s%N)
for _ in $(seq 100); do grep -q "stopped answering" "$tmp/r.out" && break; sleep 0.1; done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
rm -f "$SHIRO_HOME/run/shirod.sock"
"$shiro" send "after the restart" >/dev/null 2>&1 # starts a new daemon
pids+=("$(daemon_pid)")
for _ in $(seq 100); do grep -q "attached again" "$tmp/r.out" && break; sleep 0.1; done
echo "/memory" >&7
echo "/exit" >&7
exec 7>&-
wait "$spid"
rc=$?
if [ $rc -eq 0 ] && [ $ms -lt 6000 ] && grep -q "attached again" "$tmp/r.out" && grep -q '|after the restart$' "$tmp/r.out"; then
	ok client_session_reconnects_after_restart
else
	no client_session_reconnects_after_restart "rc=$rc, noticed after $ms ms: $(tail -c 400 "$tmp/r.out") $(head -c 200 "$tmp/r.err")"
fi

# SIGTERM ends an idle attached session at once (exit 130), and the
# daemon keeps running.
mkfifo "$tmp/in2"
timeout 60 "$shiro" <"$tmp/in2" >"$tmp/t.out" 2>&1 &
spid=$!
pids+=("$spid")
exec 8>"$tmp/in2"
for _ in $(seq 100); do grep -q '^mem ' "$tmp/t.out" && break; sleep 0.1; done
kill -TERM "$spid"
start=$(date +%s%N)
wait "$spid"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
exec 8>&-
if [ $rc -eq 130 ] && [ $ms -lt 2000 ] && "$shiro" status >/dev/null 2>&1; then
	ok client_session_ends_on_sigterm
else
	no client_session_ends_on_sigterm "rc=$rc after $ms ms: $(tail -c 300 "$tmp/t.out")"
fi

# stop: the daemon exits before the command returns; then exit 3.
"$shiro" stop --json >"$tmp/stop.json"
rc=$?
"$shiro" status >/dev/null 2>&1
rc2=$?
if [ $rc -eq 0 ] && [ $rc2 -eq 3 ] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["stopping"] else 1)' "$tmp/stop.json"; then
	ok client_stop_waits_for_exit
else
	no client_stop_waits_for_exit "rc=$rc then $rc2: $(cat "$tmp/stop.json")"
fi

# A session stopped (SIGSTOP) for longer than the idle limit (10 s):
# shirod forgets it.  Once it runs again it
# gets every message logged meanwhile, each once and in order, from
# the replay ring.  In a home of its own, so that no other client is
# counted: shirod knows the session and the status command asking.
export SHIRO_HOME=$tmp/stopped
timeout 20 "$shiro" send start >/dev/null 2>&1
pids+=("$(daemon_pid)")
attached() {
	"$shiro" status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["clients"]["attached"])' 2>/dev/null
}
# Every command says BYE as it leaves, and it arrives: twenty of them
# in a row, and shirod knows only the one asking.
for _ in $(seq 20); do "$shiro" status >/dev/null 2>&1; done
now=$(attached)
if [ "$now" = 1 ]; then
	ok client_commands_say_bye
else
	no client_commands_say_bye "shirod counts $now attached clients after 20 status commands"
fi
mkfifo "$tmp/in3"
timeout 90 "$shiro" <"$tmp/in3" >"$tmp/s.out" 2>&1 &
tpid=$!
pids+=("$tpid")
exec 9>"$tmp/in3"
echo "/status" >&9
for _ in $(seq 100); do grep -q '^mem ' "$tmp/s.out" && break; sleep 0.1; done
spid=$(cat "/proc/$tpid/task/$tpid/children" 2>/dev/null | tr -d ' ') # shiro, not timeout
[ -n "$spid" ] && pids+=("$spid")
before=$(attached)
kill -STOP "${spid:-$tpid}"
k=0 now=
while [ $k -lt 60 ]; do # a message every half second, 30 s at most
	k=$((k + 1))
	"$shiro" send "while stopped $k" >/dev/null 2>&1
	now=$(attached)
	[ "$before" = 2 ] && [ "$now" = 1 ] && break
	sleep 0.5
done
for j in 1 2 3; do
	k=$((k + 1))
	"$shiro" send "while stopped $k" >/dev/null 2>&1
done
kill -CONT "${spid:-$tpid}"
for _ in $(seq 200); do grep -q "while stopped $k\$" "$tmp/s.out" && break; sleep 0.1; done
echo "/exit" >&9
exec 9>&-
wait "$tpid"
rc=$?
got=$(grep -o 'while stopped [0-9]*$' "$tmp/s.out" | tr '\n' ,)
want=$(for j in $(seq $k); do printf 'while stopped %d,' "$j"; done)
if [ $rc -eq 0 ] && [ "$before" = 2 ] && [ "$now" = 1 ] && [ "$got" = "$want" ]; then
	ok client_session_stopped_gets_what_it_missed
else
	no client_session_stopped_gets_what_it_missed "rc=$rc, attached $before then $now after $k sends; got: $(echo "$got" | tail -c 300); $(tail -c 300 "$tmp/s.out")"
fi
"$shiro" stop >/dev/null 2>&1

# A batch event names the parents it made (shirod sends "id+n" strings):
# with a 3000-byte ceiling, ten 600-byte messages make the view shrink, and
# an attached session prints the merges.
export SHIRO_HOME=$tmp/small
mkdir -p "$SHIRO_HOME"
echo '{"memory":{"ceiling":3000,"floor":1500,"compactionCeiling":2000,"compactionFloor":1000}}' >"$SHIRO_HOME/config.json"
timeout 20 "$shiro" send start >/dev/null 2>&1
pids+=("$(daemon_pid)")
long=$(printf 'x%.0s' $(seq 600))
(sleep 1; for k in $(seq 10); do "$shiro" send "m$k $long" >/dev/null 2>&1; done; sleep 1) |
	timeout 15 "$shiro" >"$tmp/batch.out" 2>&1
if grep -Eq '^memory: batch merged [0-9]+\+[0-9]+' "$tmp/batch.out"; then
	ok client_prints_batch_merges
else
	no client_prints_batch_merges "$(grep batch "$tmp/batch.out" | head -c 300)"
fi
"$shiro" stop >/dev/null 2>&1

# LOG over its 2 MiB cap gives the newest messages and leaves out the older
# ones, as the client says: three 1 MB sends (logged as 30,000-byte pages).
export SHIRO_HOME=$tmp/big
for k in 1 2 3; do
	python3 -c 'import sys; sys.stdout.write("y" * 1048000)' | timeout 20 "$shiro" send >/dev/null 2>&1
	[ $k = 1 ] && pids+=("$(daemon_pid)")
done
timeout 20 "$shiro" log --json --tail 1000 >"$tmp/biglog.json" 2>&1
if python3 - "$tmp/biglog.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ids = [m["id"] for m in d["log"]]
total = sum(len(m["text"].encode()) for m in d["log"])
ok = (d["truncated"] is True and ids and ids[-1] == d["messages"] - 1
      and ids[0] > 0 and ids == list(range(ids[0], ids[-1] + 1))
      and total <= 2 << 20)
sys.exit(0 if ok else 1)
PY
then
	ok client_log_keeps_the_newest
else
	no client_log_keeps_the_newest "$(head -c 300 "$tmp/biglog.json")"
fi
"$shiro" stop >/dev/null 2>&1
exit 0
