#!/usr/bin/env bash
# store_tool.sh - build/shiro-store as a person uses it: gen, fsck,
# export and import of the gist's format, damage and repair.
set -u
bin=${BUILD:-build}/shiro-store
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

# --help and usage errors
if "$bin" --help | grep -q "fsck \[--repair\] HOME" && ! "$bin" frob 2>/dev/null; then
	[ "$("$bin" frob >/dev/null 2>&1; echo $?)" = 2 ] && pass help_and_usage ||
		fail help_and_usage "bad usage did not exit 2"
else
	fail help_and_usage "no usage text"
fi

# gen then fsck
h=$tmp/home
if "$bin" gen 3000 "$h" --seed 7 >/dev/null && out=$("$bin" fsck "$h") &&
	echo "$out" | grep -q "^messages: 3000," && echo "$out" | tail -1 | grep -qx ok; then
	pass gen_then_fsck_is_clean
else
	fail gen_then_fsck_is_clean "$out"
fi

# export, import: the same view, the same messages
g=$tmp/gist
h2=$tmp/home2
if "$bin" export --gist "$g" "$h" >/dev/null && [ -d "$g/main" ] &&
	ls "$g"/tree/*.jsonl >/dev/null 2>&1 && [ -f "$g/view.json" ] &&
	"$bin" import --gist "$g" "$h2" >/dev/null &&
	cmp -s "$h/chat/view.json" "$h2/chat/view.json" &&
	cat "$h"/chat/main/*.jsonl | cmp -s - <(cat "$h2"/chat/main/*.jsonl) &&
	"$bin" fsck "$h2" >/dev/null; then
	pass export_import_round_trip_gives_the_identical_view
else
	fail export_import_round_trip_gives_the_identical_view "views or logs differ"
fi

# import refuses a home that has a chat
if ! "$bin" import --gist "$g" "$h2" >/dev/null 2>&1; then
	pass import_refuses_a_home_with_a_chat
else
	fail import_refuses_a_home_with_a_chat "it imported twice"
fi

# an old gist chat without merge lines imports its view.json as merges
g3=$tmp/gist3
h3=$tmp/home3
cp -r "$g" "$g3"
sed -i '/"merge"/d' "$g3"/tree/*.jsonl
if "$bin" import --gist "$g3" "$h3" >/dev/null && cmp -s "$h/chat/view.json" "$h3/chat/view.json"; then
	pass a_gist_without_merge_lines_imports_its_view
else
	fail a_gist_without_merge_lines_imports_its_view "the view differs"
fi

# a damaged line: fsck names file and line, exits non-zero
d=$tmp/damaged
cp -r "$h" "$d"
f=$(ls "$d"/chat/main/*.jsonl | head -1)
sed -i '5s/"kind":"[a-z]*"/"kind":"oops"/' "$f"
out=$("$bin" fsck "$d" 2>&1)
rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "$(basename "$f") line 5: bad kind"; then
	pass fsck_names_a_damaged_line
else
	fail fsck_names_a_damaged_line "rc=$rc $out"
fi

# a torn last line: fsck reports it, --repair cuts it, then fsck is clean
t=$tmp/torn
cp -r "$h" "$t"
f=$(ls "$t"/chat/main/*.jsonl | tail -1)
printf '{"i":3000,"kind":"user","te' >>"$f"
out=$("$bin" fsck "$t" 2>&1)
rc=$?
if [ $rc -ne 0 ] && echo "$out" | grep -q "torn" &&
	"$bin" fsck --repair "$t" >/dev/null 2>&1 && "$bin" fsck "$t" >/dev/null &&
	[ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ]; then
	pass fsck_repair_cuts_a_torn_last_line
else
	fail fsck_repair_cuts_a_torn_last_line "rc=$rc $out"
fi

# a stale view.json: fsck says so; --repair rewrites it
v=$tmp/stale
cp -r "$h" "$v"
echo '[[0,0]]' >"$v/chat/view.json"
if ! "$bin" fsck "$v" >/dev/null && "$bin" fsck --repair "$v" >/dev/null &&
	cmp -s "$h/chat/view.json" "$v/chat/view.json"; then
	pass fsck_repair_rewrites_a_stale_view
else
	fail fsck_repair_rewrites_a_stale_view "not repaired"
fi
