#!/usr/bin/env bash
# test_runner.sh - tests/run itself: it must count results, and count a
# program that crashes or reports nothing as a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; }

printf '#!/bin/sh\necho "PASS a"\necho "PASS b"\necho "FAIL c: broke"\nexit 1\n' >"$tmp/mixed"
printf '#!/bin/sh\nexit 3\n' >"$tmp/crash"
printf '#!/bin/sh\necho hello\n' >"$tmp/silent"
printf '#!/bin/sh\necho "PASS d"\necho "SKIP e: no kernel"\n' >"$tmp/fine"
chmod +x "$tmp"/*

out=$("$here/run" "$tmp/mixed" "$tmp/crash" "$tmp/silent" "$tmp/fine" 2>&1)
rc=$?
last=$(printf '%s\n' "$out" | tail -n 1)
if [ "$last" = "3 passed, 3 failed, 1 skipped" ]; then ok runner_counts_results; else no runner_counts_results "last line was '$last'"; fi
if [ "$rc" -ne 0 ]; then ok runner_fails_on_failure; else no runner_fails_on_failure "exit status 0"; fi
out=$("$here/run" "$tmp/fine" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | tail -n 1)" = "1 passed, 0 failed, 1 skipped" ]; then
	ok runner_passes_clean_run
else
	no runner_passes_clean_run "rc=$rc"
fi
printf '#!/bin/sh\nsleep 30\n' >"$tmp/hang"; chmod +x "$tmp/hang"
out=$("$here/run" --timeout 1 "$tmp/hang" 2>&1)
if [ "$(printf '%s\n' "$out" | tail -n 1)" = "0 passed, 1 failed" ]; then ok runner_times_out_hangs; else no runner_times_out_hangs "no timeout failure"; fi
