#!/usr/bin/env python3
"""test_client_first.py - the first hour with shiro, driven through a
pseudo-terminal as a person would: the real client (build/shiro, or
$SHIRO_BIN) attached to a real shirod in a fresh temporary home.

  - the prompt appears, a typed message is logged, /memory and the
    status line show it;
  - a pasted block (bracketed paste) is one message;
  - text typed while the client reconnects is kept, echoed, and sent
    once, after the daemon is back;
  - an escape sequence in a message reaches the screen escaped;
  - "shiro stop" and SIGTERM end the attached session at once, saying
    why; a daemon that stays away makes it give up after
    $SHIRO_RECONNECT_SECONDS, listing what could not be sent;
  - "make deps run" leaves the user at a live prompt;

and the commands a new user meets: memory, zoom and log with and without
a daemon (the same output), after an import; NUL bytes, text that is
not UTF-8, empty messages and text that starts with a dash; escapes in
every command's output; send --json; tool --list; the messages that
name the home and shirod; a config error without older runs' lines;
text typed in a pipe session whose daemon is gone, listed when it
cannot be sent.

Every wait polls for a condition with a bound.  Prints PASS/FAIL/SKIP
lines for tests/run.
"""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptysession import Session as _Session, wait_for  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHIRO = os.path.realpath(os.environ.get("SHIRO_BIN", os.path.join(ROOT, "build/shiro")))
BUILD = os.path.dirname(SHIRO)
SHIROD = os.path.join(BUILD, "shirod")
TMP = tempfile.mkdtemp(prefix="shiro-first-")
HOME = os.path.join(TMP, "home")
ENV = dict(os.environ, SHIRO_HOME=HOME, TERM="xterm", LANG="C.UTF-8")
# The make of "make check" must not leak its jobserver into the make
# this test runs.
for k in ("SHIRO_ENDPOINT", "SHIRO_LIBEXEC", "MAKEFLAGS", "MFLAGS",
          "MAKELEVEL", "MAKEOVERRIDES"):
    ENV.pop(k, None)

started = []  # pids of daemons and sessions this test started


def Session(argv, cwd=None):
    """Session - argv under a pty (tests/ptysession.py) with this test's
    environment, its pid kept for the cleanup."""
    return _Session(argv, ENV, cwd, started)


def ok(name):
    print("PASS " + name, flush=True)


def fail(name, why):
    print("FAIL %s: %s" % (name, why), flush=True)


def shiro(*args, stdin=None, timeout=60):
    """shiro - run the client once; (status, stdout, stderr)."""
    p = subprocess.run([SHIRO] + list(args), input=stdin, env=ENV,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def daemon_pid():
    """daemon_pid - the running shirod's pid, or None."""
    rc, out, _ = shiro("status", "--json", timeout=20)
    if rc != 0:
        return None
    pid = json.loads(out)["pid"]
    if pid not in started:
        started.append(pid)
    return pid


def log_texts():
    """log_texts - the text of every message in the chat, oldest first."""
    rc, out, err = shiro("log", "--tail", "1000", "--json")
    if rc != 0:
        raise RuntimeError("log: rc=%d %r" % (rc, err[-200:]))
    daemon_pid()  # log starts one when none runs: note it for cleanup
    return [m["text"] for m in json.loads(out)["log"]]


def ours():
    """ours - pids of the processes whose SHIRO_HOME lies in this test's
    directory: daemons a client started on its own (when a test goes
    wrong, one the test did not see)."""
    pids = []
    mark = ("SHIRO_HOME=" + TMP).encode()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if any(v.startswith(mark) for v in f.read().split(b"\0")):
                    pids.append(int(d))
        except OSError:
            pass
    return pids


def cleanup():
    for pid in started + ours():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    shutil.rmtree(TMP, ignore_errors=True)


def first_session():
    """The attached client, from the prompt to "shiro stop"."""
    s = Session([SHIRO], cwd=TMP)
    try:
        if not s.expect(b"shiro> ", 30):
            fail("first_run_prompt_appears", "no prompt: %r" % s.out[-300:])
            return
        ok("first_run_prompt_appears")
        daemon_pid()

        # A typed message is logged; the status line shows the view.
        mark = len(s.out)
        s.send(b"hello from the pty\r")
        if not s.expect(b"no model is configured", 60, mark):
            fail("first_run_typed_message_is_logged",
                 "the turn did not end: %r" % s.out[mark:][-300:])
            return
        texts = log_texts()
        if texts[-1:] == ["hello from the pty"]:
            ok("first_run_typed_message_is_logged")
        else:
            fail("first_run_typed_message_is_logged", repr(texts))
        mark = len(s.out)
        s.send(b"/memory\r")
        if s.expect(b"0+1|hello from the pty", 30, mark):
            ok("first_run_memory_shows_it")
        else:
            fail("first_run_memory_shows_it", repr(s.out[mark:][-300:]))
        # The status line follows the view: it shows the message's bytes
        # once the daemon has counted them (before that it may read 0B).
        size = s.expect(re.compile(rb"mem ([1-9]\d*(?:\.\d)?)([BK])/128K"), 20, mark)
        if size:
            ok("first_run_status_line_shows_the_view")
        else:
            fail("first_run_status_line_shows_the_view", repr(s.out[-300:]))

        # A pasted block of three lines is one message, one turn.
        before = len(log_texts())
        mark = len(s.out)
        s.send(b"\x1b[200~line one\rline two\rline three\x1b[201~")
        s.expect(b"line three", 10, mark)
        s.send(b"\r")
        s.expect(b"no model is configured", 60, mark)
        texts = log_texts()
        if len(texts) == before + 1 and texts[-1] == "line one\nline two\nline three":
            ok("first_run_paste_is_one_message")
        else:
            fail("first_run_paste_is_one_message", repr(texts[before:]))

        # An escape sequence in a message (from another client) reaches
        # this screen escaped: no colour, no new window title.
        mark = len(s.out)
        rc, _, err = shiro("send", "red \x1b[31mALERT\x1b[0m and \x1b]0;pwned\x07 title")
        shown = s.expect(b"ALERT", 20, mark)
        seen = s.out[mark:]
        if rc == 0 and shown and b"^[[31mALERT^[[0m" in seen and \
                b"\x1b[31m" not in seen and b"\x1b]0;" not in seen:
            ok("first_run_escapes_reach_the_screen_escaped")
        else:
            fail("first_run_escapes_reach_the_screen_escaped",
                 "rc=%d %r" % (rc, seen[-300:]))

        # The daemon dies: what is typed meanwhile is echoed, kept, and
        # sent once another daemon listens.
        pid = daemon_pid()
        mark = len(s.out)
        os.kill(pid, signal.SIGKILL)
        if not s.expect(b"stopped answering", 20, mark):
            fail("first_run_text_typed_during_reconnect_is_sent",
                 "the loss went unnoticed: %r" % s.out[mark:][-300:])
            return
        s.send(b"typed while away")
        # The line editor draws it a key at a time, moving the cursor
        # between keys (the status sits at the right).
        echoed = wait_for(lambda: s.pump(0.1) and b"typedwhileaway" in
                          re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|[\r ]", b"",
                                 s.out[mark:]), 10)
        s.send(b"\r")
        kept = s.expect(b"is kept and sent once it is back", 10, mark)
        rc = subprocess.run([SHIROD, "--daemon"], env=ENV, timeout=30,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
        back = s.expect(b"attached again", 30, mark)
        daemon_pid()
        sent = wait_for(lambda: log_texts().count("typed while away") == 1, 30)
        if echoed and kept and rc == 0 and back and sent:
            ok("first_run_text_typed_during_reconnect_is_sent")
        else:
            fail("first_run_text_typed_during_reconnect_is_sent",
                 "echoed=%s kept=%s shirod=%d back=%s sent=%s: %r" % (
                     echoed, bool(kept), rc, bool(back), sent,
                     s.out[mark:][-400:]))
        s.expect(b"no model is configured", 60, mark)

        # shiro stop: the session says so and ends at once, exit 0.
        mark = len(s.out)
        t0 = time.time()
        rc, _, _ = shiro("stop")
        code = s.wait_exit(10)
        said = b"shirod was stopped" in s.out[mark:]
        if rc == 0 and code == 0 and said and b"reconnect" not in s.out[mark:]:
            ok("first_run_stop_ends_the_session")
        else:
            fail("first_run_stop_ends_the_session",
                 "stop rc=%d session %s after %.1f s: %r" % (
                     rc, code, time.time() - t0, s.out[mark:][-300:]))
    finally:
        s.kill()


def check(name, cond, why):
    if cond:
        ok(name)
    else:
        fail(name, why)


def in_home(home):
    """in_home - make the shiro() calls use home."""
    ENV["SHIRO_HOME"] = home


def commands():
    """The commands, one after the other, in homes of their own."""
    a = os.path.join(TMP, "a")
    in_home(a)
    for k in range(3):
        rc, _, err = shiro("send", "message %d" % k)
        if rc != 0:
            fail("commands_start", "send: %r" % err[-300:])
            return
    daemon_pid()
    live = {q: shiro(*q.split())[1] for q in ("log", "zoom 1 1", "memory")}
    rc, _, _ = shiro("stop")
    # No daemon runs: the chat is read all the same, with the same output.
    cold = {}
    for q in ("log", "zoom 1 1", "memory"):
        rc, out, err = shiro(*q.split())
        cold[q] = (rc, out, err)
    daemon_pid()
    view = lambda out: out[out.find(b"view ("):]
    check("commands_read_the_chat_without_a_daemon",
          all(cold[q][0] == 0 for q in cold) and
          cold["log"][1] == live["log"] and
          cold["zoom 1 1"][1] == live["zoom 1 1"] and
          view(cold["memory"][1]) == view(live["memory"]) and
          b"1+1|message 1" in cold["memory"][1],
          repr({q: (cold[q][0], cold[q][1][-120:], cold[q][2][-120:]) for q in cold}))
    shiro("stop")

    # After an import into a new home, the memory shows at once.
    gist = os.path.join(TMP, "gist")
    rc1, _, e1 = shiro("export", "--gist", gist)
    in_home(os.path.join(TMP, "imported"))
    rc2, _, e2 = shiro("import", "--gist", gist)
    rc3, out, e3 = shiro("memory")
    daemon_pid()
    check("commands_memory_after_import", rc1 == rc2 == rc3 == 0 and
          b"2+1|message 2" in out, "rc=%d/%d/%d %r %r" % (rc1, rc2, rc3, out[-200:], (e1 + e2 + e3)[-300:]))
    shiro("stop")

    in_home(a)
    count = len(log_texts())
    daemon_pid()
    bad = []
    for argv, stdin, want in (
            (["send"], b"before\0after", b"NUL byte"),
            (["-p"], b"a\0b", b"NUL byte"),
            (["send"], b"caf\xe9 latin-1", b"not UTF-8"),
            (["send", ""], None, b"empty"),
            (["send", "  ", "\t"], None, b"empty"),
            (["send"], b"", b"empty"),
            (["send"], b"\n", b"empty"),
            (["-p", ""], None, b"empty"),
            (["send", "--knd", "x"], None, b"after '--'")):
        rc, out, err = shiro(*argv, stdin=stdin if stdin is not None else b"")
        if rc != 2 or want not in err or out:
            bad.append((argv, stdin, rc, err[-160:]))
    check("commands_refuse_nul_non_utf8_and_empty_text",
          not bad and len(log_texts()) == count, repr(bad))

    rc1, _, e1 = shiro("send", "- a markdown bullet")
    rc2, _, e2 = shiro("send", "--", "--kind", "note")
    rc3, _, e3 = shiro("-p", "-- three dashes")
    texts = log_texts()
    check("commands_text_may_start_with_a_dash",
          rc1 == 0 and rc2 == 0 and rc3 == 4 and
          texts[-3:] == ["- a markdown bullet", "--kind note", "-- three dashes"],
          "rc=%d/%d/%d %r %r" % (rc1, rc2, rc3, texts[-3:], (e1 + e2 + e3)[-300:]))
    check("commands_no_model_names_the_home",
          a.encode() in e3 and b"$SHIRO_HOME" not in e3,
          repr(e3[-300:]))

    # Escapes and C1 controls in a message are shown escaped everywhere.
    rc, out, _ = shiro("send", "--json", "x \x1b[31mred\x1b[0m \x1b]0;title\x07 \u009b2J end")
    ack = json.loads(out) if rc == 0 else {}
    mid = ack.get("id", -1)
    check("commands_send_json_is_an_ack",
          ack.get("ev") == "ack" and isinstance(mid, int) and "key" in ack, repr(out))
    outs = {q: shiro(*q.split()) for q in ("log --tail 1", "zoom %d 1" % mid, "memory")}
    raw = [q for q, (rc, o, e) in outs.items()
           if rc != 0 or b"\x1b" in o + e or b"\xc2\x9b" in o + e or b"\x07" in o + e]
    shown = all(b"^[[31mred^[[0m" in outs[q][1] for q in ("log --tail 1", "zoom %d 1" % mid))
    rc, js, _ = shiro("log", "--tail", "1", "--json")
    check("commands_print_escapes_escaped",
          not raw and shown and rc == 0 and b"\\u001b[31m" in js and b"\\u009b" in js and
          json.loads(js)["log"][-1]["text"] == "x \x1b[31mred\x1b[0m \x1b]0;title\x07 \u009b2J end",
          "raw in %r; %r" % (raw, outs["log --tail 1"][1][-200:]))

    rc1, out, _ = shiro("tool", "--list")
    rc2, _, err = shiro("tool", "nosuch", "{}")
    try:
        names = [t["name"] for t in json.loads(out)]
    except ValueError:
        names = []
    ws = os.path.join(TMP, "ws")
    os.makedirs(ws, exist_ok=True)
    with open(os.path.join(ws, "f.txt"), "wb") as f:
        f.write("a \x1b[31mred\x1b]0;t\x07 \u0085\u009b2J \x7f \u00e9\n".encode())
    rc3, tout, terr = shiro("tool", "read_file", '{"path": "f.txt"}', "--workspace", ws)
    try:
        content = json.loads(tout)["content"]
    except (ValueError, KeyError):
        content = None
    check("commands_tool_output_is_escaped",
          rc3 == 0 and content is not None and "\x1b[31m" in content and "\u009b" in content and
          not any(c in tout for c in (b"\x1b", b"\x07", b"\xc2\x85", b"\xc2\x9b", b"\x7f")) and
          "\u00e9".encode() in tout,
          "rc=%d %r %r" % (rc3, tout[-200:], terr[-200:]))
    check("commands_tool_list_is_what_the_error_suggests",
          rc1 == 0 and "read_file" in names and rc2 == 2 and b"--list" in err,
          "rc=%d/%d %r %r" % (rc1, rc2, out[:100], err[-200:]))

    rc, out, _ = shiro("log", "--help")
    p = subprocess.run([SHIRO], input=b"/help\n/exit\n", env=ENV, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    check("commands_log_is_the_chats_messages",
          rc == 0 and b"log lines" not in out + p.stdout and b"messages" in out and
          b"the chat's last N messages" in p.stdout, repr(out[-200:]))
    shiro("stop")
    rc, _, err = shiro("--no-start", "status")
    check("commands_no_daemon_names_shirod", rc == 3 and SHIROD.encode() in err, repr(err[-300:]))

    # A pipe session: a line with a NUL is refused, the others go.
    p = subprocess.run([SHIRO], input=b"ok line\nbad\0line\n/exit\n", env=ENV,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    daemon_pid()
    texts = log_texts()
    check("commands_pipe_session_refuses_a_nul_line",
          p.returncode == 0 and b"not sent: it holds a NUL byte" in p.stdout and
          texts[-1] == "ok line" and not any(t.startswith("bad") for t in texts),
          "rc=%d %r" % (p.returncode, p.stdout[-300:]))

    # A pipe session whose daemon is gone: what it reads is kept; when it
    # cannot be sent (Ctrl-C while it waits to leave) it is listed.
    sess = subprocess.Popen([SHIRO], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=ENV)
    started.append(sess.pid)
    pid = daemon_pid()
    sess.stdin.write(b"/status\n")
    sess.stdin.flush()
    out = b""
    os.set_blocking(sess.stdout.fileno(), False)

    def read_until(what, secs):
        nonlocal out
        end = time.time() + secs
        while time.time() < end and what not in out:
            r, _, _ = select.select([sess.stdout], [], [], 0.1)
            if r:
                out += sess.stdout.read() or b""

    # Attached (the answer to /status came) before its daemon dies, or
    # the session would start a new one.
    read_until(b"clients:", 20)
    os.kill(pid, signal.SIGKILL)
    sess.stdin.write(b"lost line\n")
    sess.stdin.close()
    read_until(b"Ctrl-C leaves without it", 20)
    os.kill(sess.pid, signal.SIGINT)
    try:
        sess.wait(10)
    except subprocess.TimeoutExpired:
        sess.kill()
    rest = sess.stdout.read() or b""
    out += rest
    check("commands_unsent_text_is_listed",
          sess.returncode == 3 and b"could not be sent" in out and b"  lost line" in out,
          "rc=%s %r" % (sess.returncode, out[-400:]))

    # A config error: the client shows this run's lines of shirod.log,
    # not an earlier run's.
    in_home(os.path.join(TMP, "badconfig"))
    os.makedirs(ENV["SHIRO_HOME"])
    conf = os.path.join(ENV["SHIRO_HOME"], "config.json")
    with open(conf, "w") as f:
        f.write('{"permissions": 42}')
    rc1, _, e1 = shiro("send", "hi")
    with open(conf, "w") as f:
        f.write('{"memroy": {}}')
    rc2, _, e2 = shiro("send", "hi")
    check("commands_config_error_without_older_lines",
          rc1 == 3 and rc2 == 3 and b"permissions: must be an object" in e1 and
          b"memroy" in e2 and b"permissions" not in e2, repr(e2[-300:]))
    in_home(HOME)


def attached_in(home, name):
    """attached_in - a session attached in a fresh home under TMP, and its
    daemon's pid; (None, None) after failing name when no prompt came."""
    in_home(os.path.join(TMP, home))
    s = Session([SHIRO], cwd=TMP)
    if not s.expect(b"shiro> ", 30):
        fail(name, "no prompt: %r" % s.out[-300:])
        s.kill()
        return None, None
    return s, daemon_pid()


def stop_and_give_up():
    """A SIGTERM (as systemctl stop sends) ends an attached session at
    once, saying so; a daemon that dies and stays away makes the session
    give up after $SHIRO_RECONNECT_SECONDS, listing what it could not
    send, with exit code 3."""
    name = "stop_by_sigterm_ends_the_session"
    s, pid = attached_in("term", name)
    try:
        if s is None:
            return
        mark = len(s.out)
        os.kill(pid, signal.SIGTERM)
        code = s.wait_exit(10)
        seen = s.out[mark:]
        check("stop_by_sigterm_ends_the_session",
              code == 0 and b"shirod is stopping (SIGTERM)" in seen and
              b"shirod was stopped" in seen and b"reconnect" not in seen,
              "exit=%s %r" % (code, seen[-300:]))
    finally:
        if s is not None:
            s.kill()

    ENV["SHIRO_RECONNECT_SECONDS"] = "2"
    s, pid = attached_in("away", "reconnect_gives_up_listing_the_unsent")
    try:
        if s is None:
            return
        mark = len(s.out)
        os.kill(pid, signal.SIGKILL)
        if not s.expect(b"trying to attach again for 2 s", 20, mark):
            fail("reconnect_gives_up_listing_the_unsent",
                 "the loss went unnoticed: %r" % s.out[mark:][-300:])
            return
        s.send(b"never delivered\r")
        kept = s.expect(b"is kept and sent once it is back", 10, mark)
        t0 = time.time()
        code = s.wait_exit(20)
        took = time.time() - t0
        seen = s.out[mark:]
        check("reconnect_gives_up_listing_the_unsent",
              kept and code == 3 and b"could not be sent" in seen and
              b"never delivered" in seen.split(b"could not be sent")[-1] and
              took < 15,
              "kept=%s exit=%s after %.1f s: %r" % (bool(kept), code, took, seen[-400:]))
    finally:
        ENV.pop("SHIRO_RECONNECT_SECONDS", None)
        if s is not None:
            s.kill()


def make_deps_run():
    """The README's first command leaves the user at a live prompt."""
    if shutil.which("make") is None:
        print("SKIP first_run_make_deps_run: make is missing")
        return
    if BUILD != os.path.join(ROOT, "build"):
        print("SKIP first_run_make_deps_run: make run runs build/, not %s" % BUILD)
        return
    q = subprocess.run(["make", "-C", ROOT, "-q", "build-all"], env=ENV,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if q.returncode != 0:
        print("SKIP first_run_make_deps_run: build/ is not up to date "
              "(make builds it first)")
        return
    s = Session(["/usr/bin/env", "make", "-C", ROOT, "--no-print-directory",
                 "deps", "run"])
    try:
        prompt = s.expect(b"shiro> ", 60)
        order = s.out.find(b"deps: ") < s.out.find(b"shiro> ")
        mark = len(s.out)
        s.send(b"/status\r")
        live = s.expect(b"messages", 20, mark)
        s.send(b"/exit\r")
        code = s.wait_exit(20)
        if prompt and order and live and code == 0:
            ok("first_run_make_deps_run")
        else:
            fail("first_run_make_deps_run", "prompt=%s order=%s live=%s exit=%s: %r" % (
                bool(prompt), order, bool(live), code, s.out[-400:]))
    finally:
        s.kill()


def main():
    if not (os.access(SHIRO, os.X_OK) and os.access(SHIROD, os.X_OK)):
        print("FAIL first_run: %s and %s are not both built" % (SHIRO, SHIROD))
        return 1
    try:
        first_session()
        shiro("stop", timeout=20)
        commands()
        shiro("stop", timeout=20)
        stop_and_give_up()
        shiro("stop", timeout=20)
        make_deps_run()
        shiro("stop", timeout=20)
    finally:
        cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
