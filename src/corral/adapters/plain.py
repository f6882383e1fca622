"""Plain agents (``plain-argv``, ``plain-stdin``): any CLI that answers a prompt on stdout.

One process runs one prompt (seed 000's ``plain`` driver)::

    plain-argv    argv = launch words + the prompt as the last argument
                  (or in place of ``{prompt}`` inside one word: ``--message={prompt}``); stdin closed
    plain-stdin   argv = launch words; the prompt and a newline are written to stdin, then stdin is
                  closed (end of input is the only turn boundary a plain CLI knows)

stdout becomes text deltas as it arrives (:class:`corral.protocols.plain.PlainParser`: incremental
UTF-8, invalid bytes repaired, terminal escapes removed); stderr is kept as diagnostics (its bounded
tail rides on the turn end and on a failed turn's error). Exit 0 completes the turn; any other exit
fails it with the code. ``interrupt()`` climbs the stop ladder (:func:`corral._process.end_turn`:
no protocol cancel exists, so SIGINT to the process group, then the group is killed) and the turn
ends ``cancelled``. Every wait is bounded: the prompt write, stdout after the process exits (a
background grandchild holding it open), and the exit after stdout closes.

A plain adapter has **no session**: each prompt is a fresh process that remembers nothing, and no
optional capability is claimed. A subclass that knows how its CLI keeps a conversation (aider's
chat history file: :mod:`corral.adapters.aider_plain`) adds it and claims only what a run shows.

:func:`plain_class_for` makes the class of a manifest (the built-in examples ``example-plain-argv``
and ``example-plain-stdin``, and any custom manifest speaking ``plain-argv`` / ``plain-stdin``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Unpack

from .._process import StopStep, Tap, TurnMark, end_turn
from .._process._chunks import DEFAULT_CHUNK_TRANSPORT, ChunkTransport, ChunkTransportFactory
from ..errors import ConfigError, InvalidPromptError, ProcessError, UnsupportedOperation
from ..events import AgentInfo, EndReason, ErrorEvent, Event, SessionEnded, SessionStarted
from ..events._text import storable
from ..protocols.plain import PlainParser
from ._options import LaunchArgs
from .base import Attachment, BaseAdapter

if TYPE_CHECKING:
    from ..manifests import Manifest

PlainProtocol = Literal["plain-argv", "plain-stdin"]
PLAIN_PROTOCOLS: tuple[str, ...] = ("plain-argv", "plain-stdin")
PROMPT_PLACEHOLDER = "{prompt}"

MAX_ARG_BYTES = 131072 - 1
"""Longest single command-line argument Linux accepts (``MAX_ARG_STRLEN``, NUL included)."""
WRITE_TIMEOUT = 30.0
"""Seconds the agent gets to take a plain-stdin prompt before the turn fails."""
OUTPUT_GRACE = 2.0
"""Seconds stdout may stay open after the agent exited (a background child holding it)."""
EXIT_WAIT = 10.0
"""Seconds the agent gets to exit after closing stdout."""
SIGNAL_WAIT = 1.5
"""Seconds SIGINT gets before the process group is killed (the ladder's signal step)."""

PLAIN_OPTIONS = frozenset({"cwd", "binary", "env", "extra_args", "on_session_id"})
"""What a plain adapter honours: where and what to run. A model, an effort or a resume id would
have to be spelled in the CLI's own words, which only the manifest's launch command knows."""


def argv_for(
    binary: str,
    words: Sequence[str],
    prompt: str,
    *,
    protocol: PlainProtocol,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The argv of one prompt's process (pure): executable, extra options, the launch words and,
    for ``plain-argv``, the prompt (in place of ``{prompt}``, else appended)."""
    argv = [binary, *extra_args]
    if protocol == "plain-stdin":
        return [*argv, *words]
    if len(prompt.encode("utf-8")) > MAX_ARG_BYTES:
        raise InvalidPromptError(
            f"the prompt is longer than the {MAX_ARG_BYTES} bytes one command-line argument "
            "can hold (plain-argv passes it as one)"
        )
    if any(PROMPT_PLACEHOLDER in w for w in words):
        return [*argv, *(w.replace(PROMPT_PLACEHOLDER, prompt) for w in words)]
    return [*argv, *words, prompt]


def check_words(protocol: str, words: Sequence[str]) -> None:
    """Refuse launch words the driver could not honour (``ConfigError``)."""
    if protocol not in PLAIN_PROTOCOLS:
        raise ConfigError(f"{protocol!r} is not a plain protocol ({', '.join(PLAIN_PROTOCOLS)})")
    holders = sum(w.count(PROMPT_PLACEHOLDER) for w in words)
    if protocol == "plain-stdin" and holders:
        raise ConfigError("plain-stdin writes the prompt to stdin: {prompt} has no place in argv")
    if holders > 1:
        raise ConfigError("{prompt} may appear once in a plain-argv launch command")


class PlainAdapter(BaseAdapter, abstract=True):
    """Base of every plain agent; a subclass sets ``plain_protocol`` and ``plain_args``."""

    plain_protocol: ClassVar[PlainProtocol] = "plain-argv"
    plain_args: ClassVar[tuple[str, ...]] = ()
    """Launch words after the executable (the manifest's launch command)."""

    transport_factory: ChunkTransportFactory = DEFAULT_CHUNK_TRANSPORT
    """Builds each prompt's process; a test plugs in its own."""

    provides_models = False
    models_unavailable = "a plain agent has no model listing (its launch command picks one)"
    efforts_unavailable = "a plain agent has no efforts"
    provides_usage = False
    supported_options = PLAIN_OPTIONS

    signal_wait: ClassVar[float] = SIGNAL_WAIT

    def __init__(self, *, tap: Tap | None = None, **launch: Unpack[LaunchArgs]) -> None:
        self.take_options(launch)
        self.tap = tap
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._transport: ChunkTransport | None = None
        self._pump: asyncio.Task[None] | None = None
        self._parser: PlainParser | None = None
        self._mark = TurnMark()
        self._cancelled = False
        self._ended = False
        self.turns = 0

    # ── launch (pure) ──
    def session_args(self) -> list[str]:
        """Options that carry the conversation from one process to the next (none: no session)."""
        return []

    def agent_session_id(self) -> str | None:
        """The id of the conversation the session carries (none: no session)."""
        return None

    def build_argv(self, prompt: str) -> list[str]:
        extra = [*self.session_args(), *self.extra_args]
        return argv_for(
            self.binary, self.plain_args, prompt, protocol=self.plain_protocol, extra_args=extra
        )

    def process_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    # ── the contract ──
    async def start(self, session_id: str) -> AgentInfo:
        info = self.make_agent_info(agent_session_id=self.agent_session_id())
        self._emit(SessionStarted(agent=info, cwd=self.cwd))
        return info

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        if self._ended:
            raise ProcessError("the session has ended")
        if attachments:
            raise UnsupportedOperation(self.agent_id, "attachments (a plain agent takes text)")
        if self._pump is not None and not self._pump.done():
            raise UnsupportedOperation(self.agent_id, "input during a turn")
        argv = self.build_argv(text)
        transport = self.transport_factory(argv, env=self.process_env(), cwd=self.cwd, tap=self.tap)
        self._mark.mark()
        await transport.start()
        self._transport = transport
        self._parser = PlainParser()
        self._cancelled = False
        self.turns += 1
        self._pump = asyncio.create_task(self._run(transport, self._parser), name="plain-pump")
        if self.plain_protocol == "plain-stdin":
            await self._deliver(transport, text)
        else:
            await transport.close_stdin()

    async def _deliver(self, transport: ChunkTransport, text: str) -> None:
        try:
            await asyncio.wait_for(transport.write_line(text.encode("utf-8")), WRITE_TIMEOUT)
        except ProcessError:
            pass  # it exited without reading: its exit code tells the turn's end
        except TimeoutError:
            self._emit(
                ErrorEvent(
                    message=f"the agent did not take the prompt on stdin within {WRITE_TIMEOUT:g} s",
                    code="stdin_timeout",
                )
            )
            await transport.kill(1.0)
        await transport.close_stdin()

    async def _run(self, transport: ChunkTransport, parser: PlainParser) -> None:
        reader = asyncio.create_task(self._read(transport, parser), name="plain-stdout")
        exited = asyncio.create_task(_exited(transport), name="plain-exit")
        try:
            await asyncio.wait({reader, exited}, return_when=asyncio.FIRST_COMPLETED)
            if not reader.done():
                # The agent exited; what it printed is in the pipe. A background child that keeps
                # stdout open must not hold the turn: read a little longer, then stop reading.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(reader), OUTPUT_GRACE)
            if not exited.done():
                # stdout closed: the agent is exiting.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(exited), EXIT_WAIT)
        finally:
            read_to_eof = reader.done() and not reader.cancelled() and reader.exception() is None
            for task in (reader, exited):
                if not task.done():
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            # One process, one turn: nothing it started outlives the turn (its group, its strays).
            await transport.kill(1.0)
            if not read_to_eof:
                transport.close_stdout()
        code = transport.returncode
        for event in parser.finish(code, transport.stderr_tail, cancelled=self._cancelled):
            self._emit(event)

    async def _read(self, transport: ChunkTransport, parser: PlainParser) -> None:
        async for chunk in transport.chunks():
            for event in parser.feed(chunk):
                self._emit(event)

    async def interrupt(self) -> None:
        pump, transport = self._pump, self._transport
        if pump is None or pump.done() or transport is None:
            return
        self._cancelled = True
        step = await end_turn(
            transport=transport,
            cancel=None,  # a plain CLI has no cancel of its own: the ladder starts at SIGINT
            turn_over=pump.done,
            mark=self._mark,
            signal_wait=self.signal_wait,
        )
        if step is StopStep.IDLE:
            return
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(pump), EXIT_WAIT)

    async def stop(self) -> None:
        if self._ended:
            return
        killed = self._pump is not None and not self._pump.done()
        if killed:
            await self.interrupt()
        self._emit(SessionEnded(reason=EndReason.KILLED if killed else EndReason.COMPLETED))
        self._ended = True

    async def query_status(self) -> dict[str, Any]:
        running = self._pump is not None and not self._pump.done()
        transport = self._transport
        return {
            "alive": not self._ended,
            "busy": running,
            "pid": transport.pid if running and transport is not None else None,
            "turns": self.turns,
            "stderr_tail": transport.stderr_tail if transport is not None else "",
        }

    async def stream(self) -> AsyncIterator[Event]:
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, SessionEnded):
                return

    def _emit(self, event: Event) -> None:
        if not self._ended:
            self._events.put_nowait(storable(event))


async def _exited(transport: ChunkTransport) -> None:
    """Until the agent process has exited. Its status is polled: asyncio's ``wait()`` may also wait
    for the pipes, which a background child of the agent can hold open."""
    while True:
        if transport.returncode is not None:
            return
        await asyncio.sleep(0.05)


def _class_name(adapter_id: str) -> str:
    return "Plain_" + re.sub(r"[^0-9A-Za-z_]", "_", adapter_id)


def plain_class_for(manifest: Manifest) -> type[PlainAdapter]:
    """A class that runs ``manifest``'s ``plain-argv`` / ``plain-stdin`` launch command."""
    profile = manifest.structured
    if profile is None or profile.protocol not in PLAIN_PROTOCOLS:
        raise ConfigError(f"{manifest.id}: its structured profile speaks no plain protocol")
    try:
        words = shlex.split(profile.launch_command)
    except ValueError as exc:
        raise ConfigError(f"{manifest.id}: bad launch command: {exc}") from exc
    if not words:
        raise ConfigError(f"{manifest.id}: empty launch command")
    binary, *args = words
    check_words(profile.protocol, args)
    attrs = {
        "__module__": __name__,
        "__doc__": f"{manifest.display_name}, a {profile.protocol} agent from its manifest.",
        "agent_id": manifest.id,
        "display_name": manifest.display_name,
        "cli_binary": binary,
        "plain_protocol": profile.protocol,
        "plain_args": tuple(args),
    }
    return type(_class_name(manifest.id), (PlainAdapter,), attrs)
