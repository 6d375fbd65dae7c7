#!/usr/bin/env python3
"""bridge.py - run shiro-plan and the reference model planref.py on the
same generated scenarios and compare their outputs byte for byte; then
check the laws of the chat memory (docs/memory.md) that the runner's output shows, on the C
runner's output alone.

The C runner is $SHIRO_PLAN (default build/shiro-plan under the
repository root).  Prints PASS/FAIL lines for tests/run.
"""

import concurrent.futures
import itertools
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL = os.path.join(HERE, "planref.py")
SCENARIO_DIR = os.path.join(HERE, "scenarios")
RUN_TIMEOUT = 120  # seconds for one run of either side


def plan_binary():
    """plan_binary - the C runner under test."""
    path = os.environ.get("SHIRO_PLAN", "build/shiro-plan")
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def run_plan(argv, text):
    """run_plan - run a runner on scenario text given on standard input;
    returns (exit status, stdout, stderr), with status None on a
    timeout or when the program cannot start."""
    try:
        p = subprocess.run(
            argv,
            input=text.encode(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return None, b"", b"timed out"
    except OSError as e:
        return None, b"", str(e).encode()
    return p.returncode, p.stdout, p.stderr


def c_side(*args):
    """c_side - the argv of the C runner."""
    return [plan_binary()] + list(args)


def model_side(*args):
    """model_side - the argv of the reference model."""
    return [sys.executable, MODEL] + list(args)


def first_difference(a, b):
    """first_difference - describe the first line where two outputs
    differ."""
    la = a.decode(errors="replace").split("\n")
    lb = b.decode(errors="replace").split("\n")
    for n in range(max(len(la), len(lb))):
        x = la[n] if n < len(la) else "<end of output>"
        y = lb[n] if n < len(lb) else "<end of output>"
        if x != y:
            return "output line %d: shiro-plan '%s' / planref '%s'" % (
                n + 1,
                clip(x),
                clip(y),
            )
    return "outputs differ"


def clip(s, n=300):
    """clip - shorten a long line for a failure message."""
    return s if len(s) <= n else s[:n] + "..."


def report(name, why):
    """report - print one result line; why is None for a pass."""
    if why is None:
        print("PASS %s" % name, flush=True)
    else:
        print("FAIL %s: %s" % (name, why), flush=True)


# ---------------------------------------------------------------------------
# Scenario generators.  Each returns the scenario text; all randomness
# comes from a random.Random with a fixed seed.


class Compactor:
    """The nodes a compactor could build next, and the sizes it gives."""

    def __init__(self, rng, node, leaf=(20, 512)):
        self.rng = rng
        self.node = node  # (lowest, highest) size of a built parent
        self.leaf = leaf  # the same for a message built late
        self.built = set()
        self.ready = []  # nodes whose inputs exist and that are not built

    def add_message(self, t, built):
        """add_message - message t arrived, built at once or not."""
        if built:
            self.mark_built(0, t)
        else:
            self.ready.append((0, t))

    def mark_built(self, level, index):
        """mark_built - record a build and queue the parent it allows."""
        self.built.add((level, index))
        sibling = (level, index ^ 1)
        if sibling in self.built:
            self.ready.append((level + 1, index // 2))

    def build(self, k, lines):
        """build - build ready entry k; appends the event to lines."""
        level, index = self.ready.pop(k)
        size = self.rng.randint(*(self.leaf if level == 0 else self.node))
        self.mark_built(level, index)
        lines.append("built %d %d %d" % (level, index, size))

    def build_all(self, lines):
        """build_all - the instant compactor: build everything ready,
        children before parents."""
        while self.ready:
            self.build(0, lines)


def gen_instant(seed, count, budget=None, leaf=(20, 512), node=(300, 512)):
    """gen_instant - every message built at once, every parent built as
    soon as its children are."""
    rng = random.Random(seed)
    comp = Compactor(rng, node)
    lines = ["# instant compactor, seed %d" % seed]
    if budget:
        lines.append("budget %d %d" % budget)
    for t in range(count):
        lines.append("msg %d" % rng.randint(leaf[0], leaf[1]))
        comp.add_message(t, True)
        comp.build_all(lines)
    return "\n".join(lines) + "\n"


def gen_late(seed, count, budget=None):
    """gen_late - messages arrive unbuilt (a few short ones built at
    once); the compactor stalls for stretches, then builds ready nodes
    in random order, so batches stop above the floor and go on later."""
    rng = random.Random(seed)
    comp = Compactor(rng, (300, 512))
    lines = ["# late compactor, seed %d" % seed]
    if budget:
        lines.append("budget %d %d" % budget)
    stall = 0
    for t in range(count):
        short = rng.random() < 0.1
        lines.append("msg %d" % rng.randint(20, 512) if short else "msg")
        comp.add_message(t, short)
        if stall > 0:
            stall -= 1
            continue
        if rng.random() < 0.004:
            stall = rng.randint(40, 250)
            continue
        for _ in range(rng.randint(0, 8)):
            if not comp.ready:
                break
            comp.build(rng.randrange(len(comp.ready)), lines)
    return "\n".join(lines) + "\n"


def gen_random(seed):
    """gen_random - random sizes, budgets, placeholder sizes, units,
    orders, fits and a compactor of random speed."""
    rng = random.Random(seed)
    lines = ["# random run, seed %d" % seed]
    lines_unit = rng.random() < 0.3
    if lines_unit:
        lines.append("unit lines")
        ceil = rng.randint(4, 120)
    else:
        ceil = rng.randint(300, 30000)
    floor = rng.randint(0, ceil)
    lines.append("budget %d %d" % (ceil, floor))
    if rng.random() < 0.6:
        lines.append("placeholder %d" % rng.randint(1, 600))
    if rng.random() < 0.2:
        lines.append("order first")
    leaf_hi = rng.randint(1, 2000)
    leaf = (rng.randint(1, leaf_hi), leaf_hi)
    node_hi = rng.randint(1, 1000)
    node = (rng.randint(1, node_hi), node_hi)
    comp = Compactor(rng, node, leaf)
    p_built = rng.random()
    switches = rng.random() < 0.3  # unit and order change during the run
    p_build = rng.uniform(0.4, 0.95)
    count = rng.randint(150, 700)
    for t in range(count):
        if rng.random() < p_built:
            lines.append("msg %d" % rng.randint(leaf[0], leaf[1]))
            comp.add_message(t, True)
        else:
            lines.append("msg")
            comp.add_message(t, False)
        while comp.ready and rng.random() < p_build:
            k = rng.randrange(len(comp.ready)) if rng.random() < 0.5 else 0
            comp.build(k, lines)
        r = rng.random()
        if r < 0.05:
            lines.append("fit %d" % rng.randint(0, ceil))
        elif r < 0.06:
            ceil = rng.randint(4, 120) if lines_unit else rng.randint(300, 30000)
            floor = rng.randint(0, ceil)
            lines.append("budget %d %d" % (ceil, floor))
        elif r < 0.065:
            lines.append("placeholder %d" % rng.randint(1, 600))
        elif r < 0.0675 and switches:
            lines.append("order %s" % rng.choice(("first", "last")))
        elif r < 0.07 and switches:
            lines.append("unit %s" % rng.choice(("bytes", "lines")))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The laws, checked on the C runner's output alone.

LAWS = (
    "view_covers",
    "message_appends",
    "message_merges_nothing",
    "merge_is_one_pair_and_covers",
    "fit_merges_built",
    "fit_reaches_budget",
    "view_summarized",
    "size_and_shrinking",
)


class LawState:
    """What the law checker knows from the events alone."""

    def __init__(self):
        self.built = {}
        self.t = 0
        self.view = []  # (level, index) pairs
        self.covered = 0  # messages the checked view covers
        self.ceil, self.floor = 128000, 64000
        self.pending = None
        self.placeholder = 29
        self.lines = False
        self.shrinking = False

    def size_of(self, node):
        """size_of - a line's size in the current unit."""
        if self.lines:
            return 1
        return self.built.get(node, self.placeholder)

    def size(self, view):
        """size - a view's size in the current unit."""
        if self.lines:
            return len(view)
        return sum(map(self.built.get, view, itertools.repeat(self.placeholder)))

    def can_merge(self, view):
        """can_merge - whether some sibling pair has a built parent."""
        for a, b in zip(view, view[1:]):
            if a[0] == b[0] and a[1] % 2 == 0 and b[1] == a[1] + 1:
                if (a[0] + 1, a[1] // 2) in self.built:
                    return True
        return False


def parse_output_line(line):
    """parse_output_line - (event tokens, fields, view, stars) of one
    output line, or None when it does not have the runner's form."""
    if " | " not in line:
        return None
    head, tail = line.split(" | ", 1)
    event = head.split(" ")[1:]
    parts = tail.split(" ")
    fields = {}
    k = 0
    while k < len(parts) and "=" in parts[k]:
        key, _, value = parts[k].partition("=")
        fields[key] = value
        k += 1
    if k >= len(parts) or parts[k] != "view":
        return None
    view, stars = [], []
    for item in parts[k + 1 :]:
        known = VIEW_ITEMS.get(item)
        if known is None:
            l, _, i = item.rstrip("*").partition(":")
            if not (l.isdigit() and i.isdigit()):
                return None
            known = VIEW_ITEMS[item] = ((int(l), int(i)), item.endswith("*"))
        view.append(known[0])
        stars.append(known[1])
    return event, fields, view, stars


VIEW_ITEMS = {}  # "l:i" or "l:i*" -> ((l, i), star): lines repeat a lot


def check_laws(run, output, fails):
    """check_laws - walk one run's output and record the first broken
    case of each law in fails (law -> message)."""
    st = LawState()

    def broke(law, msg):
        fails.setdefault(law, msg)

    for n, line in enumerate(output.decode(errors="replace").splitlines(), 1):
        parsed = parse_output_line(line)
        if parsed is None:
            broke("view_covers", "%s line %d has no view: %s" % (run, n, clip(line)))
            return
        event, fields, view, stars = parsed
        where = "%s, output line %d (%s)" % (run, n, " ".join(event))
        try:
            size = int(fields["size"])
            batch = fields["batch"] == "1"
            shrinking = fields["shrinking"] == "1"
            made_text = fields["merges"]
            t = int(fields["T"])
        except (KeyError, ValueError):
            broke("view_covers", "%s: bad fields on output line %d" % (run, n))
            return
        made = []
        for item in made_text.split(",") if made_text != "-" else []:
            l, _, i = item.partition(":")
            if not (l.isdigit() and i.isdigit()):
                broke("merge_is_one_pair_and_covers", "%s: merges=%s" % (where, made_text))
                return
            made.append((int(l), int(i)))
        before = list(st.view)
        name = event[0]
        args = [int(x) for x in event[1:] if x.isdigit()]
        budget = None
        if name == "msg":
            if st.pending:
                st.ceil, st.floor = st.pending
                st.pending = None
            if len(args) == 1:
                st.built[(0, st.t)] = args[0]
            before.append((0, st.t))
            st.t += 1
            want_batch = st.shrinking or st.size(before) > st.ceil
            if batch != want_batch:
                broke(
                    "size_and_shrinking",
                    "%s: batch=%d, expected %d" % (where, batch, want_batch),
                )
            if not batch and view != before:
                broke("message_appends", "%s: the view changed" % where)
            if not batch and made:
                broke("message_merges_nothing", "%s: merged %s" % (where, made_text))
            budget = st.floor
        elif name == "built":
            st.built[(args[0], args[1])] = args[2]
        elif name == "fit":
            budget = args[0]
        elif name == "budget":
            st.pending = (args[0], args[1])
        elif name == "placeholder":
            st.placeholder = args[0]
        elif name == "unit":
            st.lines = event[1] == "lines"
        if name not in ("msg", "fit") and (batch or made or view != before):
            broke("message_merges_nothing", "%s changed the view" % where)
        if t != st.t:
            broke("view_covers", "%s: T=%d, expected %d" % (where, t, st.t))
            return
        # Replay the merges one pair at a time.
        cur = before
        cur_size = st.size(cur)
        for parent in made:
            l, i = parent
            if parent not in st.built:
                broke("fit_merges_built", "%s: merged into unbuilt %d:%d" % (where, l, i))
            if budget is not None and cur_size <= budget:
                broke(
                    "fit_reaches_budget",
                    "%s: merged %d:%d at size %d, already within %d"
                    % (where, l, i, cur_size, budget),
                )
            left, right = (l - 1, 2 * i), (l - 1, 2 * i + 1)
            k = cur.index(left) if left in cur else -1
            if l == 0 or k < 0 or cur[k + 1 : k + 2] != [right]:
                broke(
                    "merge_is_one_pair_and_covers",
                    "%s: %d:%d is not the parent of two view lines" % (where, l, i),
                )
                break
            cur[k : k + 2] = [parent]
            cur_size += st.size_of(parent) - st.size_of(left) - st.size_of(right)
        else:
            if cur != view:
                broke(
                    "merge_is_one_pair_and_covers",
                    "%s: the merges do not lead to the printed view" % where,
                )
        # The old view was checked already: when it is a prefix of the
        # new one, only the new lines need a look.
        old, start = st.view, 0
        if len(view) >= len(old) and view[: len(old)] == old:
            start, first = st.covered, len(old)
        else:
            first = 0
        for l, i in view[first:]:
            if i << l != start:
                broke("view_covers", "%s: line %d:%d is out of place" % (where, l, i))
                break
            start += 1 << l
        if start != st.t:
            broke("view_covers", "%s: the view covers %d of %d" % (where, start, st.t))
        st.view, st.covered = view, start
        unbuilt = [n not in st.built for n in view]
        if unbuilt != stars or any(s and n[0] for n, s in zip(view, unbuilt)):
            broke("view_summarized", "%s: a line is marked wrong" % where)
        vsize = st.size(view)
        if size != vsize:
            broke("size_and_shrinking", "%s: size=%d, expected %d" % (where, size, vsize))
        if budget is not None and batch:
            if vsize > budget and st.can_merge(view):
                broke(
                    "fit_reaches_budget",
                    "%s: stopped at %d over %d with a pair left" % (where, vsize, budget),
                )
        if name == "msg" and batch:
            st.shrinking = vsize > st.floor
        if shrinking != st.shrinking:
            broke("size_and_shrinking", "%s: shrinking=%d" % (where, shrinking))


# ---------------------------------------------------------------------------


def scenarios():
    """scenarios - (name, text) of every generated scenario."""
    out = [
        ("gist_sizes_3000", gen_instant(1, 3000)),
        ("small_budget_6000_3000", gen_instant(2, 4000, (6000, 3000))),
        ("small_budget_2000_1000", gen_instant(3, 4000, (2000, 1000), (20, 200), (100, 300))),
        ("late_compactor_1500", gen_late(4, 1500)),
        ("late_compactor_2500", gen_late(5, 2500, (32000, 16000))),
    ]
    count = int(os.environ.get("BRIDGE_RANDOM_RUNS", "24"))
    for k in range(count):
        out.append(("random_%02d" % k, gen_random(1000 + k)))
    return out


def saved_scenarios():
    """saved_scenarios - (name, path) of the files in tests/scenarios/,
    which the runners read by name rather than on standard input."""
    out = []
    if os.path.isdir(SCENARIO_DIR):
        for f in sorted(os.listdir(SCENARIO_DIR)):
            if f.endswith(".txt"):
                out.append(("file_" + f[:-4], os.path.join(SCENARIO_DIR, f)))
    return out


def compare(name, text, fails, path=None):
    """compare - run both sides on one scenario (text, or the file at
    path) and report."""
    args = [path] if path else []
    # The model runs in its own process while this one checks the laws
    # on the C output: the two take about as long as each other.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        model = pool.submit(run_plan, model_side(*args), text)
        rc_c, out_c, err_c = run_plan(c_side(*args), text)
        if rc_c in (0, 2):
            check_laws(name, out_c, fails)
        rc_m, out_m, err_m = model.result()
    if rc_m is None or (rc_m != 0 and rc_m != 2):
        report("bridge_" + name, "planref failed: %s" % err_m.decode(errors="replace"))
        return
    if rc_c != rc_m:
        report(
            "bridge_" + name,
            "shiro-plan exited %s, planref %d; stderr: %s"
            % (rc_c, rc_m, clip(err_c.decode(errors="replace").strip())),
        )
        return
    if out_c != out_m:
        report("bridge_" + name, first_difference(out_c, out_m))
        return
    if rc_m == 2:
        prefix_m = err_m.split(b":")[:2]
        prefix_c = err_c.split(b":")[:2]
        if prefix_c != prefix_m or not err_c.startswith(b"error: line "):
            report(
                "bridge_" + name,
                "stderr '%s', expected it to start like '%s'"
                % (clip(err_c.decode(errors="replace")), err_m.decode().strip()),
            )
            return
    report("bridge_" + name, None)


def check_final(text):
    """check_final - --final prints exactly the last line of a run."""
    rc_c, out_c, _ = run_plan(c_side("--final"), text)
    rc_m, out_m, _ = run_plan(model_side("--final"), text)
    _, full, _ = run_plan(model_side(), text)
    last = full.rstrip(b"\n").split(b"\n")[-1] + b"\n"
    if rc_m != 0 or out_m != last:
        return "planref --final printed %r" % clip(out_m.decode())
    if rc_c != 0 or out_c != last:
        return "shiro-plan --final printed %r (status %s)" % (
            clip(out_c.decode(errors="replace")),
            rc_c,
        )
    return None


def main():
    """main - every bridge check, one PASS/FAIL line each."""
    binary = plan_binary()
    if not os.access(binary, os.X_OK):
        report("bridge", "%s is not an executable (make build/shiro-plan)" % binary)
        return 1
    start = time.monotonic()
    fails = {}
    for name, text in scenarios():
        compare(name, text, fails)
    for name, path in saved_scenarios():
        compare(name, "", fails, path)
    for law in LAWS:
        report("law_" + law, fails.get(law))
    report("bridge_final_flag", check_final(gen_random(77)))
    print("# bridge took %.1f s" % (time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
