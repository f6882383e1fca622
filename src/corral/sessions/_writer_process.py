"""The session manager's writer in a process of its own (``corral serve``'s default).

:class:`ProcessDbWriter` has :class:`~corral.sessions._writer.DbWriter`'s interface and
guarantees, but its operations (each an :class:`~corral._db.Op`: a module-level function and its
arguments) are pickled and sent down a pipe to a child process that owns the write connection.
The child takes every frame waiting when it wakes (at most ``max_batch`` to a transaction), runs
them with the thread's transaction, savepoint and ``synchronous`` rules
(:class:`~corral.sessions._writer.Batches`), and answers each batch with one frame, in submission
order. A receiver thread in the parent resolves the futures: concurrent ones at once, asyncio
ones with one loop callback per loop per batch. The child's Python runs under its own GIL, so
the service's event loop no longer shares one with the SQLite work (docs/performance.md, part 3,
round 11; decision 051).

What differs from the thread:

* an operation must pickle (an ``Op``, not a closure); one that does not is refused by
  :meth:`~ProcessDbWriter.submit` with the pickling error, before anything is sent;
* an error raised by an operation comes back as the same type with the same ``args`` and
  attributes (rebuilt without calling its ``__init__``);
* cancelling an asyncio future does not withdraw its operation (it was sent already);
* the child dies with its parent: a clean :meth:`~ProcessDbWriter.close` sends an empty frame
  after the last operation, and the child commits everything before it and exits; if the parent
  dies instead, the child is killed with it (``PR_SET_PDEATHSIG`` on Linux), and wherever that
  does not reach, the end of the pipe without the empty frame makes the child drop what it had
  not committed and exit, as a killed writer thread would;
* if the child dies, every operation waiting for it fails with :class:`WriterProcessError`, and
  the writer refuses new ones.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import fcntl
import os
import pickle
import select
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from ._writer import CLOSE_TIMEOUT, MAX_BATCH, Batches, Operation, Progress, resolve

T = TypeVar("T")

START_TIMEOUT = 30.0
"""How long the constructor waits for the child to be started (not for its imports)."""

SEND_TIMEOUT = 30.0
"""How long a write waits for room in the pipe (the child reads it between its batches); a child
that has not read for this long is taken for stuck, and killed."""

_CHILD = (
    "import sys; from corral.sessions._writer_process import _child;"
    " _child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))"
)
"""The child's program (``-c``, not ``-m``: the package imports this module before ``-m`` would
run it)."""
_LEN = struct.Struct("<I")
_PIPE_SIZE = 1 << 20
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_PR_SET_PDEATHSIG = 1

_Waiting = tuple["Future[Any] | asyncio.Future[Any]", "asyncio.AbstractEventLoop | None"]
_ErrorSpec = tuple[type[BaseException], tuple[Any, ...], dict[str, Any]]


class WriterProcessError(sqlite3.OperationalError):
    """The writer's process ended before it answered."""


class ProcessDbWriter(Progress):
    """:class:`~corral.sessions._writer.DbWriter`'s interface over a child process (see the
    module docstring)."""

    def __init__(self, db_path: str | Path, *, max_batch: int = MAX_BATCH) -> None:
        super().__init__()
        self.max_batch = max_batch
        self.batches = 0
        """Transactions committed so far (each one fsync), as the child last reported."""
        self.operations = 0
        """Operations that ran so far (committed or not), as the child last reported."""
        self._db_path = str(db_path)
        self._waiting: collections.deque[_Waiting] = collections.deque()
        self._ended: str | None = None
        self._started = threading.Event()
        self._start_error: BaseException | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._out = -1
        # The receiver thread starts the child, so the thread that started it (what
        # PR_SET_PDEATHSIG watches) lives exactly as long as the child does.
        self._thread = threading.Thread(
            target=self._run, name="corral-writer-receiver", daemon=True
        )
        self._thread.start()
        if not self._started.wait(START_TIMEOUT):
            raise WriterProcessError("the database writer's process did not start")
        if self._start_error is not None:
            raise WriterProcessError(
                f"the database writer's process did not start: {self._start_error}"
            ) from self._start_error

    @property
    def pid(self) -> int | None:
        """The child's process id."""
        return self._proc.pid if self._proc is not None else None

    def submit(
        self, operation: Operation[T], *, durable: bool = True, savepoint: bool = True
    ) -> Future[T]:
        """As :meth:`DbWriter.submit <corral.sessions._writer.DbWriter.submit>`."""
        future: Future[T] = Future()
        future.set_running_or_notify_cancel()
        self._put(operation, durable, savepoint, future, None)
        return future

    def submit_async(
        self, operation: Operation[T], *, durable: bool = True, savepoint: bool = True
    ) -> asyncio.Future[T]:
        """As :meth:`DbWriter.submit_async <corral.sessions._writer.DbWriter.submit_async>`,
        except that cancelling the future does not withdraw the operation."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._put(operation, durable, savepoint, future, loop)
        return future

    def _put(
        self,
        operation: Operation[Any],
        durable: bool,
        savepoint: bool,
        future: Future[Any] | asyncio.Future[Any],
        loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        try:
            payload = pickle.dumps((operation, durable, savepoint), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise TypeError(
                "a write for the writer's process must pickle (an Op of a module-level"
                f" function and picklable arguments), and {operation!r} does not: {exc}"
            ) from exc
        with self._lock:
            if self._ended is not None:
                raise WriterProcessError(self._ended)
            if self._closed:
                raise sqlite3.ProgrammingError("the database writer is closed")
            self._waiting.append((future, loop))
            try:
                _write_all(self._out, _LEN.pack(len(payload)) + payload, SEND_TIMEOUT)
            except (OSError, TimeoutError) as exc:  # the receiver fails what the child had taken
                self._waiting.pop()
                raise WriterProcessError(self._broken(exc)) from exc
            self._submitted += 1

    def close(self) -> None:
        """Commit what was already submitted, then end the child and the receiver thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._out >= 0:
                try:
                    _write_all(self._out, _LEN.pack(0), SEND_TIMEOUT)
                except (OSError, TimeoutError) as exc:
                    self._broken(exc)
                os.close(self._out)
                self._out = -1
        self._thread.join(CLOSE_TIMEOUT)
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def _broken(self, exc: BaseException, what: str | None = None) -> str:
        """The pipe to the child failed (it is gone, has not read for ``SEND_TIMEOUT``, or
        ``what``): kill it, so the receiver fails every write it had taken; the message new
        writes get. Called with ``_lock`` held."""
        if what is not None:
            why = f"the database writer's process {what} ({exc}), and was killed"
        elif isinstance(exc, TimeoutError):
            why = (
                f"the database writer's process read nothing for {SEND_TIMEOUT:g} s, and was killed"
            )
        else:
            why = f"the database writer's process is gone: {exc}"
        if self._ended is None:
            self._ended = why
        if self._proc is not None:
            with contextlib.suppress(OSError):
                self._proc.kill()
        return self._ended

    # ── the receiver thread ──
    def _run(self) -> None:
        try:
            down_r, down_w = os.pipe()
            up_r, up_w = os.pipe()
            for fd in (down_w, up_w):
                with contextlib.suppress(OSError):
                    fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_SIZE)
            try:
                self._proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        _CHILD,
                        self._db_path,
                        str(down_r),
                        str(up_w),
                        str(self.max_batch),
                    ],
                    pass_fds=(down_r, up_w),
                    stdin=subprocess.DEVNULL,
                    env=_child_env(),
                )
            except BaseException:
                os.close(down_w)
                os.close(up_r)
                raise
            finally:
                os.close(down_r)
                os.close(up_w)
        except BaseException as exc:
            self._start_error = exc
            self._closed = True
            self._started.set()
            return
        os.set_blocking(down_w, False)  # so a write's wait for room has a bound (SEND_TIMEOUT)
        self._out = down_w
        self._started.set()
        self._receive(up_r)

    def _receive(self, fd: int) -> None:
        with open(fd, "rb", buffering=_PIPE_SIZE) as stream:
            while True:
                head = stream.read(_LEN.size)
                if len(head) < _LEN.size:
                    break
                (size,) = _LEN.unpack(head)
                payload = stream.read(size)
                if len(payload) < size:
                    break
                try:
                    self.batches, self.operations, outcomes = pickle.loads(payload)
                except Exception as exc:  # an answer this process cannot read: end the child
                    with self._lock:
                        self._broken(exc, "sent an answer that could not be read")
                    break
                self._answer(outcomes)
        self._fail_waiting()

    def _answer(self, outcomes: Sequence[tuple[bool, Any]]) -> None:
        waiting = self._waiting
        resolve(
            (*waiting.popleft(), ok, value if ok else _exception(value)) for ok, value in outcomes
        )
        self._count_done(len(outcomes))

    def _fail_waiting(self) -> None:
        assert self._proc is not None
        try:
            code: int | None = self._proc.wait(CLOSE_TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        with self._lock:
            if not self._closed and self._ended is None:  # the child ended by itself
                self._ended = f"the database writer's process ended (exit code {code})"
            self._closed = True
            if self._out >= 0:
                with contextlib.suppress(OSError):
                    os.close(self._out)
                self._out = -1
            if self._waiting:
                error = self._ended or f"the database writer's process ended (exit code {code})"
                spec: _ErrorSpec = (WriterProcessError, (error,), {})
                self._answer([(False, spec)] * len(self._waiting))


def _child_env() -> dict[str, str]:
    """This environment, with this corral's directory first on the child's import path: the
    child unpickles the same modules the parent pickled, wherever this corral was imported from."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def _write_all(fd: int, data: bytes, timeout: float | None = None) -> None:
    """Write all of ``data``; on a non-blocking ``fd``, wait for room ``timeout`` seconds at most
    in all (``TimeoutError``)."""
    view = memoryview(data)
    deadline = None if timeout is None else time.monotonic() + timeout
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError from None
            select.select([], [fd], [], left)


def _exception(spec: _ErrorSpec) -> BaseException:
    """An exception rebuilt from its type, ``args`` and attributes, without calling its
    ``__init__`` (corral's errors take other arguments than the ``args`` they keep)."""
    cls, args, attrs = spec
    try:
        exc = cls.__new__(cls, *args)
        exc.args = args
        exc.__dict__.update(attrs)
    except Exception:  # a type that cannot be rebuilt so: its name and message, never a raise
        return sqlite3.OperationalError(f"{cls.__name__}: {', '.join(map(str, args))}")
    return exc


def _spec(exc: BaseException) -> _ErrorSpec:
    attrs = dict(getattr(exc, "__dict__", {}))
    try:
        pickle.dumps((type(exc), exc.args, attrs))
    except Exception:
        return (sqlite3.OperationalError, (f"{type(exc).__name__}: {exc}",), {})
    return (type(exc), exc.args, attrs)


# ── the child ──
def _child(db_path: str, down: int, up: int, max_batch: int) -> None:
    # A terminal's Ctrl-C or a stop of the process group is the parent's to handle; the child
    # ends with it (see the module docstring).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _die_with_parent()
    batches = Batches(db_path)
    os.set_blocking(down, False)
    buf = bytearray()
    closing = False
    while not closing:
        select.select([down], [], [])
        eof = False
        while True:
            try:
                chunk = os.read(down, _PIPE_SIZE)
            except BlockingIOError:
                break
            if not chunk:
                eof = True
                break
            buf += chunk
        items, closing, used = _frames(buf)
        del buf[:used]
        if eof and not closing:  # the parent died: commit nothing more
            os._exit(1)
        for first in range(0, len(items), max_batch):
            batch = items[first : first + max_batch]
            outcomes = [
                (True, value) if ok else (False, _spec(value))
                for ok, value in batches.commit(batch)
            ]
            _send(up, (batches.batches, batches.operations, outcomes))
    batches.conn.close()


def _frames(buf: bytearray) -> tuple[list[tuple[Operation[Any], bool, bool]], bool, int]:
    """The whole frames at the start of ``buf``: their operations, whether the closing (empty)
    frame ended them, and the bytes they took."""
    items: list[tuple[Operation[Any], bool, bool]] = []
    at = 0
    while len(buf) - at >= _LEN.size:
        (size,) = _LEN.unpack_from(buf, at)
        start = at + _LEN.size
        if size == 0:
            return items, True, start
        if len(buf) - start < size:
            break
        items.append(pickle.loads(buf[start : start + size]))
        at = start + size
    return items, False, at


def _die_with_parent() -> None:
    """Have the kernel SIGKILL this process when the thread that started it ends (Linux)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the parent died before the prctl
        os._exit(1)


def _send(fd: int, message: tuple[int, int, list[tuple[bool, Any]]]) -> None:
    try:
        payload = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    except Exception:  # a result that does not pickle: that write alone learns it
        batches, operations, outcomes = message
        payload = pickle.dumps((batches, operations, [_sendable(o) for o in outcomes]))
    _write_all(fd, _LEN.pack(len(payload)) + payload)


def _sendable(outcome: tuple[bool, Any]) -> tuple[bool, Any]:
    """``outcome``, or an error in its place if it does not pickle (the write took effect; only
    its result is lost)."""
    try:
        pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        error = TypeError(f"a write committed, but its result could not be sent back: {exc}")
        return (False, _spec(error))
    return outcome
