"""Play a recorded transcript into a real driver, in both directions.

A transcript (``tests/fixtures/transcripts/<cli>/<version>/<scenario>.jsonl``, written by
``corral record``) is a list of ``{"dir": "in"|"out", "line": …}`` and ``{"dir": "exit", "code":
…}`` entries: what the driver wrote, what the agent printed, and where a process ended. A
:class:`Recording` splits it into one segment per process and hands out one
:class:`ReplayTransport` per ``transport_factory`` call, in order::

    recording = Recording.load(path)
    adapter.transport_factory = recording.factory
    await adapter.start("s1")          # the real driver, reading recorded lines
    ...
    recording.check()                  # every line consumed, nothing diverged

Both directions are checked and answered:

* a line the driver writes is matched with the next recorded ``in`` line by its *shape* (method,
  message type and subtype, result or error, and the decision inside an approval answer: ACP's
  ``outcome``, Codex's ``decision``, Claude's ``behavior``). A different line is a
  :class:`ReplayDivergence`, kept in :attr:`Recording.problems` and raised to the driver.
* an ``out`` line is released only after every ``in`` line recorded before it was written, so the
  agent "answers" what the driver asked, when it asked. The request ids the driver chose are put
  into the recorded responses (ids with random parts, like Claude's, differ from run to run).

A process ends when the driver ends it (``close_stdin`` or ``kill``) once its lines are consumed,
with the recorded exit code — unless the agent ended it itself: by default (``agent_exits=None``) a
recorded exit code other than 0 or a termination signal's (qwen exits 130 after an interrupt, a
crash exits 1) happens on its own once the lines before it are read; ``True``/``False`` force it.
Timestamps, paths and other recorded values are played back unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

from .._process import OverlongLine, Tap
from ..errors import ProcessError
from . import _transcript as transcript

DEFAULT_WAIT = 10.0
"""How long a recorded line waits for the driver's write before the replay reports a divergence."""


class ReplayDivergence(AssertionError):
    """The driver did something the recording did not (or not what it did)."""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def shape(msg: Any) -> tuple[Any, ...]:
    """What must match between a line the driver writes and the recorded one."""
    if not isinstance(msg, dict):
        return ("text",)
    sig: list[Any] = [msg.get("method"), msg.get("type")]
    if isinstance(msg.get("request"), dict):
        sig.append(msg["request"].get("subtype"))
    response = msg.get("response")
    if isinstance(response, dict):
        sig += [response.get("subtype"), _dict(response.get("response")).get("behavior")]
    if "result" in msg:
        result = _dict(msg["result"])
        decision = {k: result[k] for k in ("outcome", "decision", "behavior") if k in result}
        sig += ["result", json.dumps(decision, sort_keys=True)]
    if "error" in msg:
        sig.append("error")
    return tuple(sig)


def _request_id(msg: Any) -> Any:
    """The id of a request the driver sends (JSON-RPC, Pi command or Claude control request)."""
    msg = _dict(msg)
    if msg.get("type") == "control_request":
        return msg.get("request_id")
    if "id" in msg and "result" not in msg and "error" not in msg:
        return msg["id"]
    return None


def _with_ids(msg: Any, ids: Mapping[Any, Any]) -> Any:
    """A recorded response carrying the ids the driver used instead of the recorded ones."""
    if not ids or not isinstance(msg, dict):
        return msg
    if msg.get("type") == "control_response" and isinstance(msg.get("response"), dict):
        rid = msg["response"].get("request_id")
        if rid in ids:
            return {**msg, "response": {**msg["response"], "request_id": ids[rid]}}
        return msg
    is_response = "method" not in msg and msg.get("type") in (None, "response")
    if is_response and msg.get("id") in ids:
        return {**msg, "id": ids[msg["id"]]}
    return msg


_KILLED = (-15, -9, 143, 137)
"""Exit codes of a process ended by a signal (SIGTERM / SIGKILL, as a negative or a shell code)."""


class ReplayTransport:
    """One recorded agent process, behind the :class:`corral._process.LineTransport` interface."""

    shape_of = staticmethod(shape)
    """What must match between what the driver sends and what the recording has."""

    def __init__(
        self,
        entries: Sequence[Mapping[str, Any]],
        *,
        argv: Sequence[str] = (),
        tap: Tap | None = None,
        agent_exits: bool | None = None,
        wait: float = DEFAULT_WAIT,
        problems: list[str] | None = None,
    ) -> None:
        self.entries = [e for e in entries if e.get("dir") in ("in", "out")]
        exits = [e for e in entries if e.get("dir") == "exit"]
        self.exit_code: int | None = int(exits[0].get("code", 0)) if exits else None
        self.argv = list(argv)
        self.tap = tap
        if agent_exits is None:
            agent_exits = self.exit_code not in (None, 0, *_KILLED)
        self.agent_exits = agent_exits
        self.wait_for_driver = wait
        self.problems = problems if problems is not None else []
        self.written: list[Any] = []
        self.killed_by_us = False
        self._ids: dict[Any, Any] = {}
        self._next_in = 0
        self._next_out = 0
        self._returncode: int | None = None
        self._started = False
        self._stdin_closed = False
        self._ended_by_driver = asyncio.Event()
        self._progress = asyncio.Event()
        self._eof = asyncio.Event()

    # ── LineTransport ──
    async def start(self) -> None:
        self._started = True

    @property
    def pid(self) -> int | None:
        return None

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stderr_tail(self) -> str:
        return ""

    @property
    def consumed(self) -> bool:
        """Every recorded line was written by the driver or read by it."""
        return self._next_in >= self._count("in") and self._next_out >= self._count("out")

    @property
    def pending_write(self) -> Any | None:
        """The recorded line the driver is expected to write next (``None``: no more writes)."""
        if self._next_in >= self._count("in"):
            return None
        return self.entries[self._position("in", self._next_in)].get("line")

    @property
    def caught_up(self) -> bool:
        """Every recorded line before the next expected write has been read by the driver."""
        return self._next_out >= self._count("out") or self._position(
            "out", self._next_out
        ) > self._position("in", self._next_in)

    async def progressed(self, timeout: float) -> None:
        """Wait until the driver writes or reads another line (or the process ends)."""
        self._progress.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._progress.wait(), timeout)

    def _count(self, direction: str) -> int:
        return sum(1 for e in self.entries if e["dir"] == direction)

    def _position(self, direction: str, nth: int) -> int:
        """The index in ``entries`` of the ``nth`` entry going ``direction`` (len if none)."""
        seen = 0
        for i, e in enumerate(self.entries):
            if e["dir"] == direction:
                if seen == nth:
                    return i
                seen += 1
        return len(self.entries)

    def _fail(self, message: str) -> ReplayDivergence:
        self.problems.append(message)
        return ReplayDivergence(message)

    async def lines(self) -> AsyncIterator[bytes | OverlongLine]:
        if not self._started:
            raise ProcessError("process not started")
        while self._next_out < self._count("out"):
            position = self._position("out", self._next_out)
            while self._position("in", self._next_in) < position:
                if self._returncode is not None:
                    return
                self._progress.clear()
                try:
                    await asyncio.wait_for(self._progress.wait(), self.wait_for_driver)
                except TimeoutError:
                    expected = self.entries[self._position("in", self._next_in)]
                    raise self._fail(
                        f"the driver never wrote the recorded line {expected.get('line')!r}"
                    ) from None
            if self._returncode is not None:
                return
            entry = self.entries[position]
            self._next_out += 1
            raw = (
                json.dumps(_with_ids(entry["line"], self._ids), ensure_ascii=False).encode()
                if "line" in entry
                else str(entry.get("text", "")).encode()
            )
            self._tap("out", raw)
            self._progress.set()
            yield raw
        if not (self.exit_code is not None and self.agent_exits):
            await self._ended_by_driver.wait()
        self._end(self.exit_code if self.exit_code is not None else 0)

    async def write_line(self, data: bytes) -> None:
        if self._returncode is not None or self._stdin_closed:
            raise ProcessError("agent stdin is closed", self._returncode, "")
        try:
            msg: Any = json.loads(data)
        except ValueError:
            msg = data.decode("utf-8", "replace")
        self._tap("in", data)
        expected = self._accept(msg)
        recorded_id, actual_id = _request_id(expected), _request_id(msg)
        if recorded_id is not None and actual_id is not None:
            self._ids[recorded_id] = actual_id

    def _accept(self, msg: Any) -> Any:
        """Check what the driver sent against the next recorded ``in`` entry; returns that entry."""
        self.written.append(msg)
        if self._next_in >= self._count("in"):
            raise self._fail(f"the driver wrote a line the recording does not have: {msg!r}")
        expected = self.entries[self._position("in", self._next_in)].get("line")
        if self.shape_of(msg) != self.shape_of(expected):
            raise self._fail(
                f"the driver wrote {self.shape_of(msg)} where the recording has "
                f"{self.shape_of(expected)}: {msg!r} vs {expected!r}"
            )
        self._next_in += 1
        self._progress.set()
        return expected

    async def close_stdin(self) -> None:
        """Like a real agent, the process then exits once it has printed its remaining lines —
        unless the recording ends in a termination signal: that agent outlived its closed stdin
        and was killed, so here too only :meth:`kill` ends it."""
        self._stdin_closed = True
        if self.exit_code not in _KILLED:
            self._ended_by_driver.set()
        self._progress.set()

    async def wait(self, timeout: float | None = None) -> int:
        await asyncio.wait_for(self._eof.wait(), timeout)
        assert self._returncode is not None
        return self._returncode

    async def kill(self, grace: float = 3.0) -> int | None:
        if self._returncode is None:
            self.killed_by_us = True
            self._end(-15)
        return self._returncode

    def _end(self, code: int) -> None:
        if self._returncode is not None:
            return
        self._returncode = code
        self._tap("exit", str(code).encode())
        self._ended_by_driver.set()
        self._progress.set()
        self._eof.set()

    def _tap(self, direction: Any, line: bytes) -> None:
        if self.tap is not None:
            with contextlib.suppress(Exception):
                self.tap(direction, line)


_T = TypeVar("_T", bound=ReplayTransport)


class Recording:
    """A transcript file as a ``transport_factory``: one :class:`ReplayTransport` per process."""

    def __init__(
        self,
        entries: Sequence[Mapping[str, Any]],
        *,
        agent_exits: bool | None = None,
        wait: float = DEFAULT_WAIT,
    ) -> None:
        self.segments: list[list[Mapping[str, Any]]] = [[]]
        for entry in entries:
            self.segments[-1].append(entry)
            if entry.get("dir") == "exit":
                self.segments.append([])
        if not self.segments[-1] and len(self.segments) > 1:
            self.segments.pop()
        self.agent_exits = agent_exits
        self.wait = wait
        self.problems: list[str] = []
        self.transports: list[ReplayTransport] = []

    @classmethod
    def load(cls, path: Path | str, **options: Any) -> Self:
        return cls(transcript.read(path), **options)

    def sent(self, segment: int = 0) -> list[Any]:
        """The lines the recorded driver wrote to process ``segment`` (prompts, answers…)."""
        return [e.get("line") for e in self.segments[segment] if e.get("dir") == "in"]

    def factory(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        tap: Tap | None = None,
    ) -> ReplayTransport:
        """A ``transport_factory``: the next recorded process."""
        return self._next(ReplayTransport, argv, tap)

    def _next(self, kind: type[_T], argv: Sequence[str], tap: Tap | None, **extra: Any) -> _T:
        if len(self.transports) >= len(self.segments):
            message = f"the driver started process #{len(self.transports) + 1}; the recording has {len(self.segments)}"
            self.problems.append(message)
            raise ReplayDivergence(message)
        transport = kind(
            self.segments[len(self.transports)],
            argv=argv,
            tap=tap,
            agent_exits=self.agent_exits,
            wait=self.wait,
            problems=self.problems,
            **extra,
        )
        self.transports.append(transport)
        return transport

    def check(self) -> None:
        """Raise :class:`ReplayDivergence` unless every process ran and every line was consumed."""
        if self.problems:
            raise ReplayDivergence("; ".join(self.problems))
        if len(self.transports) != len(self.segments):
            raise ReplayDivergence(
                f"the driver started {len(self.transports)} of {len(self.segments)} processes"
            )
        for i, transport in enumerate(self.transports):
            if not transport.consumed:
                raise ReplayDivergence(
                    f"process #{i + 1}: {transport._next_in} of {transport._count('in')} "
                    f"recorded writes and {transport._next_out} of {transport._count('out')} "
                    "recorded lines were used"
                )
