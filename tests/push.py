#!/usr/bin/env python3
"""push.py - the law push_agrees and the gist's T = 10 example, on
shiro-plan ($SHIRO_PLAN, default build/shiro-plan) and on the reference
model planref.py.

Taelin's push is written here as the binary counter of the memory's rules
(docs/memory.md): a list
of lines, newest last; a new message either joins the newest line (that
line's keep bit was 0: it absorbs) or moves that line one place up the
counter, where the same choice repeats (its bit was 1: it carries).  The
planner, fed one message per step, every parent built as soon as its
children are, and a fit to push's list length after each step, must show
push's list at every step.  Prints PASS/FAIL lines for tests/run.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bridge import c_side, clip, model_side, parse_output_line, report, run_plan  # noqa: E402

STEPS = 20001  # steps t = 0..20,000: message t arrives at step t
FIRST_AGREES = 481  # steps where due-from-first still shows push's list
T10_LAST = "30 fit 3 | T=10 size=3 shrinking=0 batch=1 merges=1:4 view 2:0 2:1 1:4"
T10_FIRST = "30 fit 3 | T=10 size=3 shrinking=0 batch=1 merges=3:0 view 3:0 0:8 0:9"


def push(lines, node, pos=0):
    """push - add node (a (level, index) line) at counter position pos of
    lines, a list newest last; returns the new list.  The line at
    position pos has level pos (bit 0) or pos + 1 (bit 1)."""
    if not lines:
        return [node]
    level, index = lines[-1]
    if level == pos:
        # Bit 0 absorbs: the newest line and the node are siblings.
        return lines[:-1] + [(level + 1, index // 2)]
    # Bit 1 carries: the newest line moves up one position.
    return push(lines[:-1], lines[-1], pos + 1) + [node]


def push_run(steps, order):
    """push_run - the scenario text, and push's list after each step."""
    text = ["unit lines", "order %s" % order]
    lists = []
    cur = []
    for t in range(steps):
        text.append("msg 1")
        count = t + 1
        level = 1
        while count % (1 << level) == 0:
            text.append("built %d %d 1" % (level, (count >> level) - 1))
            level += 1
        cur = push(cur, (0, t))
        text.append("fit %d" % len(cur))
        lists.append(cur)
    return "\n".join(text) + "\n", lists


def covers(lines, count):
    """covers - whether a list of lines covers messages 0..count-1 in
    order, each line a tree node."""
    start = 0
    for level, index in lines:
        if index << level != start:
            return False
        start += 1 << level
    return start == count


def fit_views(argv, text):
    """fit_views - run a runner and return the views printed after each
    fit, or an error string."""
    rc, out, err = run_plan(argv, text)
    if rc != 0:
        return "exit status %s: %s" % (rc, clip(err.decode(errors="replace")))
    views = []
    for line in out.decode(errors="replace").splitlines():
        parsed = parse_output_line(line)
        if parsed is None:
            return "unreadable output line '%s'" % clip(line)
        event, _, view, stars = parsed
        if event[0] == "fit":
            if any(stars):
                return "a placeholder after step %d" % len(views)
            views.append(view)
    return views


def agreement(views, lists):
    """agreement - (steps where the view is push's list, first step
    where it is not, or None)."""
    same = 0
    first_miss = None
    for t, (view, want) in enumerate(zip(views, lists)):
        if view == want:
            same += 1
        elif first_miss is None:
            first_miss = t
    return same, first_miss


def t10_line(argv, order):
    """t10_line - the last output line of the gist's T = 10 example."""
    text, _ = push_run(10, order)
    rc, out, err = run_plan(argv, text)
    if rc != 0:
        return "exit status %s: %s" % (rc, clip(err.decode(errors="replace")))
    return out.decode(errors="replace").rstrip("\n").split("\n")[-1]


def check_side(side, argv, last_text, last_lists, first_text):
    """check_side - every push check on one runner."""
    views = fit_views(argv, last_text)
    if isinstance(views, str):
        report("push_agrees_%s" % side, views)
    elif len(views) != STEPS:
        report("push_agrees_%s" % side, "%d fits printed, expected %d" % (len(views), STEPS))
    else:
        same, miss = agreement(views, last_lists)
        why = None
        if miss is not None:
            why = "step %d: view %s, push %s" % (miss, views[miss], last_lists[miss])
        report("push_agrees_%s" % side, why)
    views = fit_views(argv, first_text)
    if isinstance(views, str):
        report("first_agrees_481_%s" % side, views)
        report("first_leaves_push_%s" % side, views)
    else:
        same, miss = agreement(views, last_lists)
        why = None if same == FIRST_AGREES and len(views) == STEPS else (
            "%d of %d steps agree, expected %d of %d" % (same, len(views), FIRST_AGREES, STEPS)
        )
        report("first_agrees_481_%s" % side, why)
        why = None if miss is not None and miss <= 10 else "first miss at step %s" % miss
        report("first_leaves_push_%s" % side, why)
    for order, want in (("last", T10_LAST), ("first", T10_FIRST)):
        got = t10_line(argv, order)
        why = None if got == want else "got '%s'" % clip(got)
        report("t10_%s_%s" % (order, side), why)


def main():
    """main - check push itself, then both runners."""
    last_text, last_lists = push_run(STEPS, "last")
    first_text, _ = push_run(STEPS, "first")
    bad = next(
        (t for t, lines in enumerate(last_lists) if not covers(lines, t + 1)), None
    )
    report("push_is_a_cover", None if bad is None else "step %d" % bad)
    # The counter in closed form (docs/memory.md): T = sum (1 + d_j) 2^j with
    # entry j, newest first, of level j + d_j.
    bad = None
    for t, lines in enumerate(last_lists):
        total = sum((1 << level) for level, _ in lines)
        levels = [level - j for j, (level, _) in enumerate(reversed(lines))]
        if total != t + 1 or any(d not in (0, 1) for d in levels):
            bad = t
            break
    report("push_is_a_bijective_counter", None if bad is None else "step %d" % bad)
    check_side("model", model_side(), last_text, last_lists, first_text)
    check_side("c", c_side(), last_text, last_lists, first_text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
