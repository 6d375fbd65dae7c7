#!/usr/bin/env bash
# test_client_turn.sh - shiro -p against a real shirod whose turns are
# answered by the scripted fake model worker of build/tests/test_turn:
# the reply on stdout, thinking never there, --json lines from text deltas
# to the closing done (outcome, reply, usage), options before or after
# TEXT, and the exit codes of a model error (5), an unreachable provider
# (6) and no provider at all (4).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
shiro=$(realpath "${SHIRO_BIN:-$here/build/shiro}")
bin=$(dirname "$shiro")
fake=$bin/tests/test_turn
tmp=$(mktemp -d)
unset SHIRO_ENDPOINT SHIRO_LIBEXEC ANTHROPIC_API_KEY ANTHROPIC_BASE_URL \
	OPENAI_API_KEY OPENAI_BASE_URL SHIRO_PROVIDER SHIRO_BASE_URL \
	SHIRO_API_KEY SHIRO_MODEL
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }

# stop_home - stop the shirod of home $1, if one runs.
stop_home() {
	SHIRO_HOME=$1 timeout 20 "$shiro" stop >/dev/null 2>&1
}
cleanup() {
	stop_home "$tmp/home"
	stop_home "$tmp/none"
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -x "$shiro" ] || [ ! -x "$bin/shirod" ] || [ ! -x "$fake" ] ||
	[ ! -x "$bin/shiro-model-worker" ]; then
	echo "SKIP client_turn: build/shiro, shirod, the model worker and tests/test_turn are not all built"
	
# shiro doctor without any provider: it says so, and exits non-zero.
timeout 60 "$shiro" doctor --json >"$tmp/d.json" 2>"$tmp/d.err"
rc=$?
if [ $rc -ne 0 ] && python3 - "$tmp/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["models"]
assert m["turns"] is None and m["compactions"]["provider"] == "offline", m
assert m["ok"] is False and d["ok"] is False, d
PY
then ok doctor_says_no_provider; else no doctor_says_no_provider "rc=$rc $(head -c 300 "$tmp/d.json")"; fi
exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "SKIP client_turn: python3 is missing"
	
# shiro doctor without any provider: it says so, and exits non-zero.
timeout 60 "$shiro" doctor --json >"$tmp/d.json" 2>"$tmp/d.err"
rc=$?
if [ $rc -ne 0 ] && python3 - "$tmp/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["models"]
assert m["turns"] is None and m["compactions"]["provider"] == "offline", m
assert m["ok"] is False and d["ok"] is False, d
PY
then ok doctor_says_no_provider; else no doctor_says_no_provider "rc=$rc $(head -c 300 "$tmp/d.json")"; fi
exit 0
fi

export SHIRO_HOME=$tmp/home
mkdir -p "$SHIRO_HOME"
echo "sk-client-test" >"$SHIRO_HOME/key"
cat >"$SHIRO_HOME/config.json" <<EOF
{"providers": {"fake": {"type": "anthropic", "url": "http://127.0.0.1:9",
   "keyFile": "$SHIRO_HOME/key"}},
 "turns": {"provider": "fake"}, "memory": {"provider": "offline"},
 "workers": [{"role": "model", "provider": "fake", "count": 1,
   "path": "$fake"}, {"role": "model", "provider": "offline", "count": 1}]}
EOF
cat >"$SHIRO_HOME/fake.json" <<'EOF'
{"calls": [
 {"chunks": [["start", ""], ["thinking", "mulling it over"],
   ["text", "Hello"], ["text", " back."]], "text": "Hello back."},
 {"chunks": [["start", ""], ["thinking", "hmm"], ["text", "JSON "],
   ["text", "reply"]], "text": "JSON reply",
  "usage": {"input": 120, "output": 7, "cache_read": 90, "cache_write": 30}},
 {"text": "options after"},
 {"fail": ["http", "500 from anthropic: overloaded (request req_9)"]},
 {"fail": ["unreachable", "could not connect to 127.0.0.1:9"]}
]}
EOF

# The reply on stdout, nothing else there; exit 0.
out=$(timeout 30 "$shiro" -p "say hello" 2>"$tmp/err1")
rc=$?
if [ $rc -eq 0 ] && [ "$out" = "Hello back." ] && ! grep -q mulling "$tmp/err1"; then
	ok print_shows_the_reply
else
	no print_shows_the_reply "rc=$rc out='$out' err=$(head -c 300 "$tmp/err1")"
fi

# --json: text deltas and thinking, then done with the outcome, the reply
# and the usage; the message itself is not echoed back.
timeout 30 "$shiro" --json -p "in json" >"$tmp/j.out" 2>"$tmp/j.err"
rc=$?
why=$(python3 - "$tmp/j.out" <<'PY'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
kinds = [e["ev"] for e in evs]
assert kinds[-1] == "done", kinds
d = evs[-1]
assert d["outcome"] == "ok" and d["exit"] == 0, d
assert d["text"] == "JSON reply", d
assert d["usage"] == {"input": 120, "output": 7, "cache_read": 90,
                      "cache_write": 30}, d
assert "".join(e["text"] for e in evs if e["ev"] == "text") == "JSON reply"
assert [e["text"] for e in evs if e["ev"] == "thinking"] == ["hmm"], evs
assert set(kinds) <= {"text", "thinking", "memory", "notice", "error",
                      "done"}, kinds
print("ok")
PY
)
if [ $rc -eq 0 ] && [ "$why" = ok ]; then ok print_json_lines; else no print_json_lines "rc=$rc $why $(head -c 300 "$tmp/j.out")"; fi

# Options after TEXT.
timeout 30 "$shiro" -p "late options" --json >"$tmp/a.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && tail -1 "$tmp/a.out" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); sys.exit(0 if d["ev"]=="done" and d["text"]=="options after" else 1)'; then
	ok print_takes_options_after_text
else
	no print_takes_options_after_text "rc=$rc $(head -c 300 "$tmp/a.out")"
fi

# A model error: 5, and why on stderr.
timeout 30 "$shiro" -p "fail please" >"$tmp/m.out" 2>"$tmp/m.err"
rc=$?
if [ $rc -eq 5 ] && grep -q "500 from anthropic" "$tmp/m.err"; then
	ok print_model_error_exits_5
else
	no print_model_error_exits_5 "rc=$rc $(head -c 300 "$tmp/m.err")"
fi

# An unreachable provider: 6.
timeout 30 "$shiro" -p --json "unreachable please" >"$tmp/u.out" 2>"$tmp/u.err"
rc=$?
if [ $rc -eq 6 ] && tail -1 "$tmp/u.out" | grep -q '"outcome":"unreachable"'; then
	ok print_unreachable_provider_exits_6
else
	no print_unreachable_provider_exits_6 "rc=$rc $(head -c 300 "$tmp/u.out")"
fi

# The replies are logged as shiro, the thinking is not.
"$shiro" log --json --tail 50 >"$tmp/log.json"
if python3 - "$tmp/log.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))["log"]
texts = [(m["kind"], m["text"]) for m in log]
assert ("shiro", "Hello back.") in texts and ("shiro", "JSON reply") in texts
assert not any("mulling" in t for _, t in texts)
PY
then ok print_replies_are_logged; else no print_replies_are_logged "$(head -c 300 "$tmp/log.json")"; fi

# shiro status: tokens per provider and model with the estimated cost
# (120 in, 7 out, 90 cache reads and 30 cache writes at Sonnet's prices:
# 120*3 + 7*15 + 90*0.3 + 30*3.75 millionths of a dollar = $0.000605).
"$shiro" status >"$tmp/status.txt"
if grep -q "fake claude-sonnet-4-5: 3 calls, 120 in + 90 cache read + 30 cache write, 7 out, \$0.000605" "$tmp/status.txt"; then
	ok status_shows_usage_and_cost
else
	no status_shows_usage_and_cost "$(grep -A3 usage "$tmp/status.txt" | head -c 300)"
fi

# --workspace over ipc: a relative DIR is made absolute here and names
# the project (notes), a DIR that does not exist is refused with exit 2.
mkdir -p "$tmp/proj"
real=$(realpath "$tmp/proj")
(cd "$tmp" && timeout 30 "$shiro" notes --json --workspace proj) >"$tmp/w.out" 2>"$tmp/w.err"
rc=$?
(cd "$tmp" && timeout 30 "$shiro" --workspace "$tmp/missing" notes) >"$tmp/w2.out" 2>"$tmp/w2.err"
rc2=$?
if [ $rc -eq 0 ] && grep -qF "\"$real\"" "$tmp/w.out" && [ $rc2 -eq 2 ] &&
	grep -q -- "--workspace $tmp/missing" "$tmp/w2.err"; then
	ok workspace_over_ipc
else
	no workspace_over_ipc "rc=$rc rc2=$rc2 $(head -c 300 "$tmp/w.out") $(head -c 300 "$tmp/w2.err")"
fi

# No provider at all: 4, and how to set one on stderr.
export SHIRO_HOME=$tmp/none
timeout 60 "$shiro" -p "anyone?" >"$tmp/n.out" 2>"$tmp/n.err"
rc=$?
if [ $rc -eq 4 ] && grep -q ANTHROPIC_API_KEY "$tmp/n.err"; then
	ok print_no_provider_exits_4
else
	no print_no_provider_exits_4 "rc=$rc $(head -c 300 "$tmp/n.err")"
fi

# shiro doctor without any provider: it says so, and exits non-zero.
timeout 60 "$shiro" doctor --json >"$tmp/d.json" 2>"$tmp/d.err"
rc=$?
if [ $rc -ne 0 ] && python3 - "$tmp/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["models"]
assert m["turns"] is None and m["compactions"]["provider"] == "offline", m
assert m["ok"] is False and d["ok"] is False, d
PY
then ok doctor_says_no_provider; else no doctor_says_no_provider "rc=$rc $(head -c 300 "$tmp/d.json")"; fi
exit 0
