#!/usr/bin/env bash
# mutants.sh - break the planner on purpose and check that the tests see it.
#
# Each mutant is broker/plan.c built with -DPLAN_MUTANT=N (see the list in
# plan.c).  For each, shiro-plan and test_plan are built into a temporary
# directory, then test_plan runs, and tests/bridge.py and tests/push.py
# (when present) run against the mutant shiro-plan through $SHIRO_PLAN.
# A mutant passes when at least one test fails on it.  Prints one line
# per mutant, "PASS mutant_N_name: caught by ..." or "FAIL ...", for
# tests/run.
#
# By default the Python suites run only for a mutant that test_plan did
# not catch, which keeps this to a few seconds in `make check`.  With
# MUTANTS_FULL=1 every suite runs on every mutant (about 4 minutes on
# 2 cores): docs/planner.md records that run.  MUTANTS_BRIDGE_RUNS sets
# the bridge's random runs (default 4).
set -u
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
flags="-std=c11 -D_GNU_SOURCE -O2 -I. -w"
util="proto/log.c proto/xmalloc.c proto/buf.c proto/err.c"
names=(none due_from_first t_minus_1 newest_wins_ties merges_unbuilt batch_to_ceiling)
runs=${MUTANTS_BRIDGE_RUNS:-4}
full=${MUTANTS_FULL:-0}

# caught - names of the failed tests in output file $1 (prefix $2), one line.
caught() {
	grep '^FAIL ' "$1" | sed -e 's/^FAIL \([^:]*\).*/\1/' -e "s/^/$2/" |
		head -n "${MUTANTS_NAMES:-6}" | tr '\n' ' '
}

for n in 1 2 3 4 5; do
	name="mutant_${n}_${names[$n]}"
	dir="$tmp/m$n"
	mkdir -p "$dir"
	if ! $CC $flags -DPLAN_MUTANT=$n -o "$dir/shiro-plan" \
		broker/shiro-plan.c broker/plan.c broker/render.c $util \
		2>"$dir/cc.log" ||
		! $CC $flags -DPLAN_MUTANT=$n -o "$dir/test_plan" \
			tests/test_plan.c tests/harness.c broker/plan.c \
			broker/render.c $util 2>>"$dir/cc.log"; then
		echo "FAIL $name: does not build: $(head -c 300 "$dir/cc.log")"
		continue
	fi
	timeout -k 5 120 "$dir/test_plan" >"$dir/test_plan.out" 2>&1 </dev/null
	who=$(caught "$dir/test_plan.out" "test_plan:")
	if [ -n "$who" ] && [ "$full" != 1 ]; then
		echo "PASS $name: caught by ${who% }"
		continue
	fi
	if [ -f tests/bridge.py ]; then
		SHIRO_PLAN="$dir/shiro-plan" BRIDGE_RANDOM_RUNS=$runs \
			timeout -k 5 300 python3 tests/bridge.py \
			>"$dir/bridge.out" 2>&1 </dev/null
		who="$who$(caught "$dir/bridge.out" "bridge:")"
	fi
	if [ -f tests/push.py ]; then
		SHIRO_PLAN="$dir/shiro-plan" timeout -k 5 300 python3 \
			tests/push.py >"$dir/push.out" 2>&1 </dev/null
		who="$who$(caught "$dir/push.out" "push:")"
	fi
	if [ -n "$who" ]; then
		echo "PASS $name: caught by ${who% }"
	else
		echo "FAIL $name: no test failed on this mutant"
	fi
done
