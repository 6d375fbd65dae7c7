#!/usr/bin/env python3
"""planref.py - an independent reference model of shiro's planner.

It reads the scenario language of build/shiro-plan (docs/planner.md)
and prints the same output, so that tests/bridge.py can compare the two
byte for byte.  It was written from the planner's description and the
memory's rules only, without
reading the C planner, and it keeps everything as simple as it can:
plain lists and dictionaries, Python's exact integers, and a full scan
of the view for every merge.

Usage: planref.py [--final] [FILE]   (standard input without FILE)
A bad event prints "error: line N: <reason>" on stderr and exits 2.
"""

import sys
from itertools import repeat

PLACEHOLDER_BYTES = 29  # len("(not summarized yet: zoom it)")
DEFAULT_CEIL = 128000
DEFAULT_FLOOR = 64000


class ScenarioError(Exception):
    """A bad event; the message is the reason shown to the user."""


class Planner:
    """The state the scenario runner prints after each event."""

    def __init__(self):
        self.t = 0  # messages so far
        self.view = []  # (level, index) pairs, oldest first
        self.built = {}  # (level, index) -> size in bytes
        self.label = {}  # (level, index) -> " l:i", for built nodes only
        self.ceil = DEFAULT_CEIL
        self.floor = DEFAULT_FLOOR
        self.next_budget = None  # a budget waiting for the next msg
        self.placeholder = PLACEHOLDER_BYTES
        self.unit_lines = False
        self.order_first = False
        self.shrinking = False

    def line_size(self, level, index):
        """line_size - what one view line counts in the current unit."""
        if self.unit_lines:
            return 1
        size = self.built.get((level, index))
        return self.placeholder if size is None else size

    def view_size(self):
        """view_size - the sum of the view's line sizes (line_size for
        every line, written out for speed)."""
        if self.unit_lines:
            return len(self.view)
        return sum(map(self.built.get, self.view, repeat(self.placeholder)))

    def pair_age(self, level, index):
        """pair_age - the numerator of a pair's due, (T - last) or
        (T - first); the due itself is this over 2^level."""
        if self.order_first:
            return self.t - (index << level)
        return self.t - (((index + 2) << level) - 1)

    def best_pair(self):
        """best_pair - the position of the left line of the most due pair
        whose parent is built, the oldest on ties; None when none."""
        best = None
        best_age = best_level = 0
        view = self.view
        for k in range(len(view) - 1):
            level, index = view[k]
            right = view[k + 1]
            if index % 2 or right[0] != level or right[1] != index + 1:
                continue
            if (level + 1, index // 2) not in self.built:
                continue
            age = self.pair_age(level, index)
            # age/2^level > best_age/2^best_level, in integers.
            if best is None or (age << best_level) > (best_age << level):
                best, best_age, best_level = k, age, level
        return best

    def merge_down(self, budget):
        """merge_down - merge the most due pairs one at a time until the
        view's size is at most budget or nothing can merge.  Returns the
        parents made, in order."""
        made = []
        size = self.view_size()
        while size > budget:
            k = self.best_pair()
            if k is None:
                break
            level, index = self.view[k]
            parent = (level + 1, index // 2)
            size -= self.line_size(level, index)
            size -= self.line_size(level, index + 1)
            size += self.line_size(*parent)
            self.view[k : k + 2] = [parent]
            made.append(parent)
        return made

    def event_msg(self, size):
        """event_msg - message T arrives, built with size or unbuilt."""
        if self.next_budget is not None:
            self.ceil, self.floor = self.next_budget
            self.next_budget = None
        if size is not None:
            self.set_built(0, self.t, size)
        self.view.append((0, self.t))
        self.t += 1
        if not (self.shrinking or self.view_size() > self.ceil):
            return False, []
        made = self.merge_down(self.floor)
        self.shrinking = self.view_size() > self.floor
        return True, made

    def event_built(self, level, index, size):
        """event_built - the compactor built node (level, index)."""
        if (level, index) in self.built:
            raise ScenarioError("node %d:%d is already built" % (level, index))
        if (index + 1) << level > self.t:
            raise ScenarioError(
                "node %d:%d covers messages that do not exist" % (level, index)
            )
        if level > 0:
            for child in ((level - 1, 2 * index), (level - 1, 2 * index + 1)):
                if child not in self.built:
                    raise ScenarioError(
                        "child %d:%d of node %d:%d is not built"
                        % (child[0], child[1], level, index)
                    )
        self.set_built(level, index, size)

    def set_built(self, level, index, size):
        """set_built - record a built node and its printed form."""
        self.built[(level, index)] = size
        self.label[(level, index)] = " %d:%d" % (level, index)

    def status(self):
        """status - the part of an output line after the event."""
        parts = ["T=%d" % self.t, "size=%d" % self.view_size()]
        parts.append("shrinking=%d" % (1 if self.shrinking else 0))
        return parts

    def render_view(self):
        """render_view - the view as printed: " l:i" per line, "*" for a
        placeholder."""
        get = self.label.get
        return "view" + "".join([get(n) or " %d:%d*" % n for n in self.view])


# The scenario language does not bound the numbers.  The runner keeps a line's size
# in 32 bits and budgets, levels and indexes in 64, and refuses larger
# numbers as "too large"; the model refuses the same ones so that the two
# can be compared on any input.
SIZE_MAX = (1 << 32) - 1
NUMBER_MAX = (1 << 64) - 1


def number(token, limit=NUMBER_MAX):
    """number - a decimal integer token of at most limit, or a
    ScenarioError."""
    if not token.isdigit() or not token.isascii():
        raise ScenarioError("'%s' is not a decimal integer" % token)
    value = int(token)
    if value > limit:
        raise ScenarioError("%s is too large" % token)
    return value


def want(tokens, count):
    """want - check that an event has count arguments."""
    if len(tokens) - 1 != count:
        raise ScenarioError(
            "%s takes %d argument%s" % (tokens[0], count, "" if count == 1 else "s")
        )


def apply_event(plan, tokens):
    """apply_event - run one event; returns (batch, parents made)."""
    name = tokens[0]
    if name == "budget":
        want(tokens, 2)
        ceil, floor = number(tokens[1]), number(tokens[2])
        if floor > ceil:
            raise ScenarioError("the floor is above the ceiling")
        plan.next_budget = (ceil, floor)
        return False, []
    if name == "placeholder":
        want(tokens, 1)
        plan.placeholder = number(tokens[1], SIZE_MAX)
        return False, []
    if name == "unit":
        want(tokens, 1)
        if tokens[1] not in ("bytes", "lines"):
            raise ScenarioError("unit is bytes or lines")
        plan.unit_lines = tokens[1] == "lines"
        return False, []
    if name == "order":
        want(tokens, 1)
        if tokens[1] not in ("last", "first"):
            raise ScenarioError("order is last or first")
        plan.order_first = tokens[1] == "first"
        return False, []
    if name == "msg":
        if len(tokens) > 2:
            raise ScenarioError("msg takes at most one argument")
        size = number(tokens[1], SIZE_MAX) if len(tokens) == 2 else None
        return plan.event_msg(size)
    if name == "built":
        want(tokens, 3)
        level, index = number(tokens[1]), number(tokens[2])
        plan.event_built(level, index, number(tokens[3], SIZE_MAX))
        return False, []
    if name == "fit":
        want(tokens, 1)
        return True, plan.merge_down(number(tokens[1]))
    raise ScenarioError("unknown event '%s'" % name)


def run(lines, final, out):
    """run - play a scenario; returns the exit status."""
    plan = Planner()
    count = 0
    last = None
    for lineno, raw in enumerate(lines, 1):
        tokens = raw.split("#", 1)[0].split()
        if not tokens:
            continue
        count += 1
        try:
            batch, made = apply_event(plan, tokens)
        except ScenarioError as e:
            sys.stderr.write("error: line %d: %s\n" % (lineno, e))
            return 2
        merges = ",".join("%d:%d" % p for p in made) if made else "-"
        line = "%d %s | %s batch=%d merges=%s %s\n" % (
            count,
            " ".join(tokens),
            " ".join(plan.status()),
            1 if batch else 0,
            merges,
            plan.render_view(),
        )
        if final:
            last = line
        else:
            out.write(line)
    if final and last is not None:
        out.write(last)
    return 0


def main(argv):
    """main - parse the command line and run one scenario."""
    final = False
    path = None
    for arg in argv[1:]:
        if arg == "--final":
            final = True
        elif path is None:
            path = arg
        else:
            sys.stderr.write("usage: planref.py [--final] [FILE]\n")
            return 2
    if path is None or path == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            sys.stderr.write("planref.py: %s: %s\n" % (path, e.strerror))
            return 2
    return run(text.split("\n"), final, sys.stdout)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
