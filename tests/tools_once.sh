#!/usr/bin/env bash
# tools_once.sh - shiro-tool-worker --once: the standalone CLI that
# `shiro tool NAME JSON` execs.  Checks what it prints and its exit
# statuses: 0 when the tool ran (even with an error result), 2 for bad
# usage, 3 when the workspace cannot be opened.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${SHIRO_TOOL_WORKER:-$here/build/shiro-tool-worker}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }
if [ ! -x "$bin" ]; then
	echo "SKIP tools_once: $bin is not built"
	exit 0
fi
ws=$tmp/ws
mkdir -p "$ws/src"
printf 'alpha\nbeta\n' >"$ws/src/a.txt"

out=$("$bin" --once read_file '{"path":"src/a.txt","offset":2}' --workspace "$ws")
rc=$?
if [ $rc -eq 0 ] && python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["ok"] is True and r["content"] == "beta\n", r
' "$out"; then ok once_reads_file; else no once_reads_file "rc=$rc out=$out"; fi

out=$(cd "$ws" && "$bin" --once write_file '{"path":"new.txt","content":"x\n"}')
rc=$?
if [ $rc -eq 0 ] && [ "$(cat "$ws/new.txt" 2>/dev/null)" = x ]; then
	ok once_default_workspace_is_cwd
else
	no once_default_workspace_is_cwd "rc=$rc out=$out"
fi

out=$("$bin" --once read_file '{"path":"../../etc/passwd"}' --workspace "$ws")
rc=$?
if [ $rc -eq 0 ] && python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["ok"] is False and "outside the workspace" in r["error"], r
' "$out"; then ok once_error_result_exits_0; else no once_error_result_exits_0 "rc=$rc out=$out"; fi

"$bin" --once no_such_tool '{}' --workspace "$ws" >/dev/null 2>&1
rc1=$?
"$bin" --once read_file '{not json' --workspace "$ws" >/dev/null 2>&1
rc2=$?
"$bin" --once read_file '[1]' --workspace "$ws" >/dev/null 2>&1
rc3=$?
"$bin" --once read_file '{}' --bogus >/dev/null 2>&1
rc4=$?
"$bin" --once read_file >/dev/null 2>&1
rc5=$?
if [ "$rc1$rc2$rc3$rc4$rc5" = 22222 ]; then ok once_bad_usage_exits_2; else no once_bad_usage_exits_2 "got $rc1 $rc2 $rc3 $rc4 $rc5"; fi

"$bin" --once read_file '{"path":"a"}' --workspace "$tmp/missing" >/dev/null 2>&1
rc=$?
if [ $rc -eq 3 ]; then ok once_missing_workspace_exits_3; else no once_missing_workspace_exits_3 "rc=$rc"; fi

out=$("$bin" --help)
rc=$?
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q -- '--once NAME JSON'; then ok once_help; else no once_help "rc=$rc"; fi

out=$("$bin" --list)
rc=$?
if [ $rc -eq 0 ] && python3 -c '
import json, sys
tools = json.loads(sys.argv[1])
names = {t["name"] for t in tools}
need = {"read_file", "read_many_files", "write_file", "edit_file", "multi_edit",
        "apply_patch", "move_file", "delete_file", "list_dir", "glob", "grep", "bash"}
assert need <= names, names
for t in tools:
    assert t["parameters"]["type"] == "object" and t["kind"] in ("read", "write", "exec")
' "$out"; then ok once_list_schemas; else no once_list_schemas "rc=$rc"; fi
