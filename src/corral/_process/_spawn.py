"""An agent process started with ``fork`` and ``exec`` and no ``subprocess``: the early spawn's.

``corral run`` starts its agent before it imports anything it does not need for that
(decision 044); ``import subprocess`` alone (with ``threading``, ``selectors``, ``locale`` and
``re``) was a third of the time before that start (decision 056). :func:`spawn` gives the child
what ``subprocess.Popen(argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, env=env, cwd=cwd,
start_new_session=True, preexec_fn=setup)`` gives it, with only ``os``:

* three pipes on its descriptors 0, 1 and 2, every other descriptor closed (``close_fds``);
* a session and process group of its own (``setsid``);
* ``setup`` run in the child before ``exec`` (the parent-death signal,
  :func:`~corral._process._lifecycle.child_setup`);
* ``SIGPIPE`` and ``SIGXFSZ`` back to their defaults (Python ignores both; an ignored signal
  survives ``exec``: ``restore_signals``);
* the executable looked up on the ``PATH`` of ``env``, as ``subprocess`` looks it up;
* a failed ``exec`` (or ``chdir``) raised in the parent as the ``OSError`` it was, through a
  close-on-exec pipe: the parent reads it to its end, which comes at the ``exec``.

:class:`Child` has the part of ``Popen`` the early process and its hand-over use: ``pid``,
``stdin`` / ``stdout`` / ``stderr`` (unbuffered binary files), ``returncode``, ``poll()``,
``wait(timeout)`` (:class:`TimeoutError` when it runs out), ``kill()`` and ``close()`` (the
pipes).

Linux and other POSIX systems only; the code in the child between ``fork`` and ``exec`` is a few
``os`` calls, as ``preexec_fn``'s is.
"""

from __future__ import annotations

# The C module under ``signal``, which adds 4 ms of ``enum`` for names this needs not (no stub).
import _signal  # type: ignore[import-not-found,unused-ignore]
import _thread
import os
import time

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

SIGKILL: int = getattr(_signal, "SIGKILL", 9)
"""``signal.SIGKILL`` as a plain int, for code that runs before ``signal`` is imported."""

_FAILED = 255
"""The child's exit status when it could not ``exec`` (the parent raises; nobody sees it)."""


class Child:
    """A child process :func:`spawn` started (see the module docstring)."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.stdin = open(stdin, "wb", buffering=0)  # noqa: SIM115 (the child's lifetime)
        self.stdout = open(stdout, "rb", buffering=0)  # noqa: SIM115
        self.stderr = open(stderr, "rb", buffering=0)  # noqa: SIM115
        self.returncode: int | None = None
        self._waitpid = _thread.allocate_lock()  # one reaper at a time, as ``Popen`` has it

    def poll(self) -> int | None:
        """The exit code once the child has exited (reaping it), else ``None``; never blocks."""
        if self.returncode is None and self._waitpid.acquire(False):
            try:
                self._reap(os.WNOHANG)
            finally:
                self._waitpid.release()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """The exit code, waiting for it; :class:`TimeoutError` after ``timeout`` seconds."""
        if timeout is None:
            with self._waitpid:
                if self.returncode is None:
                    self._reap(0)
            assert self.returncode is not None
            return self.returncode
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while self.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"process {self.pid} still runs after {timeout:g} s")
            delay = min(delay * 2, left, 0.05)
            time.sleep(delay)
        assert self.returncode is not None
        return self.returncode

    def close(self) -> None:
        """Close this side of the three pipes (idempotent); the process is not touched."""
        for pipe in (self.stdin, self.stdout, self.stderr):
            pipe.close()

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(SIGKILL)

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:
            # Reaped by someone else (a SIGCHLD handler set to SIG_IGN): its code is lost, and
            # ``Popen`` reports 0 then too.
            self.returncode = 0
            return
        if pid == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)


def find_executable(name: str, env: Mapping[str, str]) -> str:
    """``name`` itself when it has a directory part, else the first executable file of that name
    on ``env``'s ``PATH`` (``subprocess``'s rule); :class:`FileNotFoundError` when none is."""
    if os.path.dirname(name):
        return name
    for directory in os.get_exec_path(env):
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    raise FileNotFoundError(2, "No such file or directory", name)


def spawn(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    *,
    setup: Callable[[], None] | None = None,
) -> Child:
    """Start ``argv`` in ``cwd`` with exactly ``env`` (the module docstring says how); raises the
    ``OSError`` of a missing or unrunnable executable or working directory."""
    args = list(argv)
    if not args:
        raise ValueError("an empty command line")
    if not hasattr(os, "fork"):  # Windows: the caller starts the agent its ordinary way
        raise OSError(38, "this platform has no fork")
    executable = find_executable(args[0], env)
    environ = dict(env)
    fds: list[int] = []
    try:
        for _ in range(4):
            fds.extend(os.pipe())  # close-on-exec, as Python makes every descriptor
        in_r, in_w, out_r, out_w, err_r, err_w, report_r, report_w = fds
        if min(fds) < 3:
            # This process runs without a standard descriptor, so a pipe took its number; the
            # moves below would overwrite one pipe with another. ``subprocess`` sorts that out.
            raise OSError(9, "a standard descriptor of this process is closed")
        inherited = _open_descriptors()
        pid = os.fork()
        if pid == 0:  # the child: nothing here may return into the parent's code
            stage = b"setup"
            try:
                os.setsid()
                os.dup2(in_r, 0)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                stage = b"cwd"
                os.chdir(cwd)
                stage = b"setup"
                if setup is not None:
                    setup()
                for name in ("SIGPIPE", "SIGXFSZ"):
                    number = getattr(_signal, name, None)
                    if number is not None:
                        _signal.signal(number, _signal.SIG_DFL)
                for fd in inherited:
                    if fd > 2 and fd != report_w:
                        try:  # noqa: SIM105 (no context manager between fork and exec)
                            os.close(fd)
                        except OSError:
                            pass
                stage = b"exec"
                os.execve(executable, args, environ)
            except BaseException as exc:
                errno = getattr(exc, "errno", None) or 0
                try:
                    os.write(report_w, b"%s:%d" % (stage, errno))
                finally:
                    os._exit(_FAILED)
            os._exit(_FAILED)  # not reached: execve returns only by raising
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    for fd in (in_r, out_w, err_w, report_w):
        os.close(fd)
    try:
        report = _read_all(report_r)
    except BaseException:  # interrupted while the child starts: it must not outlive the call
        for fd in (in_w, out_r, err_r):
            os.close(fd)
        os.kill(pid, SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(report_r)
    if report:
        for fd in (in_w, out_r, err_r):
            os.close(fd)
        os.waitpid(pid, 0)  # it exits right after its report
        stage, _, number = report.partition(b":")
        errno = int(number or 0)
        where = {b"cwd": cwd, b"exec": executable}.get(stage, executable)
        raise OSError(errno, os.strerror(errno) if errno else "the child's set-up failed", where)
    return Child(pid, in_w, out_r, err_r)


def _open_descriptors() -> list[int]:
    """This process's open descriptors (``/proc/self/fd``), else every number up to the limit."""
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, min(os.sysconf("SC_OPEN_MAX"), 65536)))


def _read_all(fd: int) -> bytes:
    """Every byte of ``fd`` up to its end (the child's ``exec``, or its report and exit)."""
    chunks: list[bytes] = []
    while chunk := os.read(fd, 64):  # an interrupted read is retried by Python (PEP 475)
        chunks.append(chunk)
    return b"".join(chunks)
