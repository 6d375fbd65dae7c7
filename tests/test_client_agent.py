#!/usr/bin/env python3
"""test_client_agent.py - the attached client during a turn with tools,
driven through a pseudo-terminal as a person would: the real client
(build/shiro, or $SHIRO_BIN) attached to a real shirod whose turns the
loopback mock provider (tests/mock_provider.py) scripts, with the tool
and fs workers shirod starts for the session's working directory.

  - a call that asks is put to the person with its subject (the edit's
    diff, the command), and "y" runs it: the file changes;
  - "n" with a reason denies one: nothing changes, the model reads the
    reason;
  - Ctrl-C while a command runs interrupts that command: the call says
    so and the turn goes on to its answer, the prompt comes back.

Every wait polls for a condition with a bound.  Prints PASS/FAIL/SKIP
lines for tests/run.
"""

import json
import os
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
TMP = tempfile.mkdtemp(prefix="shiro-agent-")
HOME = os.path.join(TMP, "home")
WS = os.path.join(TMP, "ws")
ENV = dict(os.environ, SHIRO_HOME=HOME, TERM="xterm", LANG="C.UTF-8")
for k in ("SHIRO_ENDPOINT", "SHIRO_LIBEXEC", "MAKEFLAGS", "MFLAGS",
          "MAKELEVEL", "MAKEOVERRIDES", "ANTHROPIC_API_KEY",
          "OPENAI_API_KEY", "SHIRO_PROVIDER", "SHIRO_API_KEY"):
    ENV.pop(k, None)

started = []  # pids this test started


def Session(argv, cwd=None):
    """Session - argv under a pty (tests/ptysession.py) with this test's
    environment, its pid kept for the cleanup."""
    return _Session(argv, ENV, cwd, started)


def shiro(*args, timeout=60):
    p = subprocess.run([SHIRO] + list(args), env=ENV, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def log_lines():
    rc, out, _ = shiro("log", "--tail", "50", "--json")
    if rc != 0:
        return []
    return [(m["kind"], m["text"]) for m in json.loads(out)["log"]]


def start_mock(script):
    port_file = os.path.join(TMP, "port")
    script_file = os.path.join(TMP, "script.json")
    with open(script_file, "w") as f:
        json.dump(script, f)
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "mock_provider.py"),
                          "--port-file", port_file, "--log",
                          os.path.join(TMP, "mock.log"), "--script", script_file])
    started.append(p.pid)
    port = wait_for(lambda: os.path.exists(port_file) and
                    open(port_file).read().strip(), 10)
    if not port:
        raise RuntimeError("the mock did not start")
    return int(port)


def cleanup():
    for pid in started:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    pids = []
    mark = ("SHIRO_HOME=" + TMP).encode()
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                with open("/proc/%s/environ" % d, "rb") as f:
                    if any(v.startswith(mark) for v in f.read().split(b"\0")):
                        pids.append(int(d))
            except OSError:
                pass
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    shutil.rmtree(TMP, ignore_errors=True)


def approvals_and_interrupts_at_the_prompt():
    """One turn: an edit approved with y, a write refused with n and a
    reason, a command interrupted with Ctrl-C; the turn answers."""
    name = "approvals_and_interrupts_at_the_prompt"
    os.makedirs(HOME)
    os.makedirs(WS)
    with open(os.path.join(WS, "notes.txt"), "w") as f:
        f.write("hello world\n")
    port = start_mock({"responses": [
        {"tools": [{"id": "e1", "name": "edit_file",
                    "input": {"path": "notes.txt", "old_string": "world",
                              "new_string": "shiro"}}]},
        {"tools": [{"id": "w1", "name": "write_file",
                    "input": {"path": "secret-plan.txt", "content": "x"}}]},
        {"tools": [{"id": "b1", "name": "bash",
                    "input": {"command": "echo started; sleep 60; echo never"}}]},
        {"text": "Edited; the command was interrupted."}]})
    with open(os.path.join(HOME, "key"), "w") as f:
        f.write("sk-test\n")
    with open(os.path.join(HOME, "config.json"), "w") as f:
        json.dump({"providers": {"mock": {
            "type": "anthropic", "url": "http://127.0.0.1:%d" % port,
            "keyFile": os.path.join(HOME, "key"), "model": "m-big"}},
            "turns": {"provider": "mock"},
            "memory": {"provider": "offline"}}, f)
    s = Session([SHIRO], WS)
    try:
        if s.expect(b"shiro> ", 20) is None:
            print("FAIL %s: no prompt: %r" % (name, s.out[-300:]))
            return
        s.send(b"fix the greeting\r")
        at = s.expect(b"allow it? y (yes)", 30)
        if at is None or b"-world" not in s.out or b"+shiro" not in s.out:
            print("FAIL %s: no edit approval: %r" % (name, s.out[-600:]))
            return
        s.send(b"y\r")
        at = s.expect(b"allow it? y (yes)", 30, at)
        if at is None or b"write secret-plan.txt" not in s.out:
            print("FAIL %s: no write approval: %r" % (name, s.out[-600:]))
            return
        s.send(b"n keep plans out of the repo\r")
        at = s.expect(b"allow it? y (yes)", 30, at)
        if at is None or b"$ echo started; sleep 60" not in s.out:
            print("FAIL %s: no command approval: %r" % (name, s.out[-600:]))
            return
        s.send(b"y\r")
        at = s.expect(b"started", 30, at)
        if at is None:
            print("FAIL %s: the command did not start: %r" % (name, s.out[-600:]))
            return
        t0 = time.time()
        s.send(b"\x03")
        at = s.expect(b"interrupting the command", 10, at)
        done = s.expect(b"Edited; the command was interrupted.", 30, at or 0)
        if at is None or done is None or time.time() - t0 > 30:
            print("FAIL %s: no interrupt: %r" % (name, s.out[-800:]))
            return
        if s.expect(b"shiro> ", 20, done) is None:
            print("FAIL %s: the prompt did not come back: %r" % (name, s.out[-400:]))
            return
        with open(os.path.join(WS, "notes.txt")) as f:
            if f.read() != "hello shiro\n":
                print("FAIL %s: the edit was not made" % name)
                return
        if os.path.exists(os.path.join(WS, "secret-plan.txt")):
            print("FAIL %s: the refused write happened" % name)
            return
        lines = log_lines()
        echoes = [t for k, t in lines if k == "echo"]
        if (len(echoes) != 3 or "the person said no: keep plans out of the repo"
                not in echoes[1] or "interrupted" not in echoes[2]):
            print("FAIL %s: the echoes: %r" % (name, echoes))
            return
        print("PASS " + name)
    finally:
        s.send(b"/exit\r")
        s.kill()


def main():
    for prog in ("shiro", "shirod", "shiro-model-worker", "shiro-fs-worker",
                 "shiro-tool-worker"):
        if not os.access(os.path.join(BUILD, prog), os.X_OK):
            print("SKIP approvals_and_interrupts_at_the_prompt: %s is not built"
                  % prog)
            return 0
    try:
        approvals_and_interrupts_at_the_prompt()
    except Exception as e:  # a broken test says so, and cleans up
        print("FAIL approvals_and_interrupts_at_the_prompt: %r" % (e,))
    finally:
        try:
            shiro("stop", timeout=20)
        except Exception:
            pass
        cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
