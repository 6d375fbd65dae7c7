"""ptysession.py - what the client's pseudo-terminal tests share: a
program run on the slave side of a pty, everything it prints kept, and
waits that poll a condition with a bound (never a bare sleep).

Used by tests/test_client_first.py and tests/test_client_agent.py.
"""

import os
import pty
import select
import signal
import time


def wait_for(cond, secs):
    """wait_for - poll cond every 50 ms for at most secs; its last value."""
    end = time.time() + secs
    while True:
        v = cond()
        if v or time.time() >= end:
            return v
        time.sleep(0.05)


class Session:
    """A program on the slave side of a pty; everything it prints is kept
    in out.  Its pid is added to started (a list the test cleans up)."""

    def __init__(self, argv, env, cwd=None, started=None):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            if cwd:
                os.chdir(cwd)
            os.execve(argv[0], argv, env)
        if started is not None:
            started.append(self.pid)
        self.out = b""
        self.status = None

    def pump(self, secs):
        """pump - read what is there within secs; False once the pty is
        gone."""
        r, _, _ = select.select([self.fd], [], [], secs)
        if r:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return False
            self.out += data
            return bool(data)
        return True

    def _find(self, pattern, since):
        if hasattr(pattern, "search"):
            return pattern.search(self.out[since:])
        k = self.out.find(pattern, since)
        return k + len(pattern) if k >= 0 else None

    def expect(self, pattern, secs, since=0):
        """expect - wait until pattern shows in the output after offset
        since: for bytes, the offset where it ends; for a compiled regex,
        the match (in the output from since); None when it did not show
        within secs or before the program ended."""
        end = time.time() + secs
        while True:
            m = self._find(pattern, since)
            if m is not None:
                return m
            if time.time() >= end or self.exited():
                self.pump(0)
                return self._find(pattern, since)
            self.pump(0.1)

    def send(self, data):
        os.write(self.fd, data)

    def exited(self):
        if self.status is None:
            p, st = os.waitpid(self.pid, os.WNOHANG)
            if p == self.pid:
                self.status = st
        return self.status is not None

    def wait_exit(self, secs):
        """wait_exit - the exit code once it ended within secs, else None."""
        end = time.time() + secs
        while not self.exited() and time.time() < end:
            self.pump(0.1)
        while select.select([self.fd], [], [], 0)[0] and self.pump(0):
            pass
        if self.status is None:
            return None
        return os.waitstatus_to_exitcode(self.status)

    def kill(self):
        try:
            if not self.exited():
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                self.status = 0
        except OSError:
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass
