"""The shell grade (seed 000): any CLI in a terminal, prompts typed in, the screen read back.

:class:`ShellAdapter` runs its manifest's ``launchCommand`` on a pseudo-terminal
(:class:`corral._process.PtyTransport`), injects each prompt the way the manifest says
(``promptInjection``) and turns the screen into normalized events with
:class:`corral.protocols.shell_screen.ScreenParser`:

* ``stdin`` — the prompt is typed, then Enter (``\\r``, the byte a terminal's Enter key sends); a
  newline in the prompt is typed as it is (most line editors take it as Enter);
* ``paste_then_enter`` — a bracketed paste (``ESC[200~`` … ``ESC[201~``), a short pause
  (``pasteDelayMs``), then Enter: a TUI takes the whole prompt as one input, newlines included;
* ``manual`` — corral never types: ``send()`` is refused with an error naming the mode.

A turn ends when the screen has been quiet for ``settleMs`` after output followed the prompt, with
the ``readyPattern`` visible and the ``busyPattern`` not (the settle heuristic), or ``error`` after
``turnTimeoutS``. ``interrupt()`` types the cancel keys (Ctrl-C) and the turn ends ``cancelled``
once the screen settles (bounded: :data:`CANCEL_BOUND`). ``stop()`` climbs the terminal ladder:
Ctrl-C, SIGTERM, SIGKILL. The configuration is data (``presentation.shell``, see
:mod:`corral.adapters._shell_profile`); one class per built-in manifest names only its id.

What a terminal cannot show is not claimed: no tool calls, approvals, usage, resume or images —
only text and cancel (verified on the real CLIs by ``corral conformance``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import time
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, ClassVar, Unpack

from .._process._pty import PtyTransport
from .._process._stop import TurnMark
from .._process._transport import Tap
from .._redact import redact
from ..errors import ProcessError, SessionError, UnsupportedOperation
from ..events import (
    AgentInfo,
    EndReason,
    Event,
    SessionStarted,
    StopReason,
    WarningEvent,
)
from ..intents import Intent, refusals
from ..manifests import Manifest, parse_manifest
from ..protocols.shell_screen import ScreenParser
from ._options import LaunchArgs
from ._outbox import EventOutbox
from ._shell_profile import ShellProfile, shell_profile
from .base import Attachment, BaseAdapter

PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"
ENTER = b"\r"
TICK = 0.05
CANCEL_BOUND = 1.5
"""Seconds after the cancel keys within which a cancelled turn ends, settled or not."""

PtyFactory = Callable[..., PtyTransport]


def injection(mode: str, text: str, *, paste_delay: float) -> list[tuple[bytes, float]]:
    """The keystrokes that hand ``text`` to a terminal program, as ``(bytes, pause after)``."""
    data = text.encode("utf-8")
    if mode == "stdin":
        return [(data + ENTER, 0.0)]
    if mode == "paste_then_enter":
        return [(PASTE_START + data + PASTE_END, paste_delay), (ENTER, 0.0)]
    raise UnsupportedOperation(
        "shell", f"sending a prompt: promptInjection is {mode!r} (the user types into the terminal)"
    )


@functools.cache
def builtin_manifest(adapter_id: str) -> Manifest:
    """The built-in manifest ``corral/registry/builtin/<id>.json``."""
    item = resources.files("corral.registry") / "builtin" / f"{adapter_id}.json"
    return parse_manifest(json.loads(item.read_text("utf-8")), source=item.name)


class ShellAdapter(EventOutbox, BaseAdapter, abstract=True):
    """A terminal program driven as a user would; subclasses name their manifest."""

    manifest_id: ClassVar[str]
    """The built-in manifest this class drives (``corral/registry/builtin/<id>.json``)."""
    shell_manifest: ClassVar[Manifest | None] = None
    """A manifest given as data instead (custom manifests: :func:`shell_class_for`)."""
    transport_factory: ClassVar[PtyFactory] = PtyTransport
    """Builds the terminal; the default is a real pseudo-terminal."""

    provides_models = False
    models_unavailable = "a shell-grade agent is driven through its terminal, which lists no models"
    provides_usage = False
    cap_cancel = True
    supported_options = frozenset({"cwd", "model", "binary", "env", "extra_args"})
    intent_refusals = refusals(
        "the shell grade only types into the program's terminal: corral sets no permission rule "
        "it could enforce, and cannot see a tool call to check one (use the structured adapter)",
        *Intent,
    )

    def __init__(self, *, base_env: dict[str, str] | None = None, **launch: Unpack[LaunchArgs]):
        self.profile = self.load_profile()
        self.take_options(launch, binary_name=self.profile.argv[0])
        if self.model and not self.profile.model_args:
            raise UnsupportedOperation(self.agent_id, "the launch option 'model'")
        self.env = {**(os.environ if base_env is None else base_env), **self.env}
        self.parser = ScreenParser(
            self.profile.rules, columns=self.profile.columns, rows=self.profile.rows
        )
        self.transport: PtyTransport | None = None
        self.tap: Tap | None = None
        """Sees every write, every chunk read and the exit code (``corral record`` sets it)."""
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._last_output = 0.0
        self._prompt_at = 0.0
        self._output_since_prompt = False
        self._dirty = False
        self._cancel_at: float | None = None
        self._turn_done = asyncio.Event()
        self._turn_done.set()
        self._stopping = False
        self._ended = False
        self._turn_mark = TurnMark()

    @classmethod
    def load_profile(cls) -> ShellProfile:
        return shell_profile(cls.shell_manifest or builtin_manifest(cls.manifest_id))

    def argv(self) -> list[str]:
        return [
            self.binary,
            *self.profile.argv[1:],
            *self.profile.model_argv(self.model),
            *self.extra_args,
        ]

    # ── lifecycle ──
    async def start(self, session_id: str) -> AgentInfo:
        self.transport = self.transport_factory(
            self.argv(),
            env=self.env,
            cwd=self.cwd,
            columns=self.profile.columns,
            rows=self.profile.rows,
            tap=self.tap,
        )
        await self.transport.start()
        self._last_output = time.monotonic()
        self._reader = asyncio.create_task(self._read(), name=f"{self.agent_id}-terminal")
        try:
            await self._until_ready(self.profile.start_timeout)
        except BaseException:
            await self.transport.kill()
            raise
        info = self.make_agent_info(model=self.model)
        self._emit([SessionStarted(agent=info, cwd=self.cwd)])
        return info

    async def _until_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._settled(self.profile.settle):
            if self.transport is None or self.transport.at_eof:
                raise SessionError(
                    f"{self.agent_id} exited before its terminal was ready: {self._screen_tail()}"
                )
            if time.monotonic() >= deadline:
                raise SessionError(
                    f"{self.agent_id} showed no ready screen within {timeout:.0f} s: "
                    f"{self._screen_tail()}"
                )
            await asyncio.sleep(TICK)

    def _settled(self, quiet: float) -> bool:
        return time.monotonic() - self._last_output >= quiet and self.parser.ready()

    def _screen_tail(self) -> str:
        lines = [line for line in self.parser.display() if line.strip()]
        return redact(" | ".join(lines[-6:]), self.env) or "(blank screen)"

    async def stop(self) -> None:
        if self._stopping or self.transport is None:
            return
        self._stopping = True
        code = await self.transport.stop()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 3.0)
        self._finish_turn(StopReason.ERROR, "the session was stopped during the turn")
        self._end(EndReason.COMPLETED, code, None)

    # ── the terminal ──
    async def _read(self) -> None:
        transport = self.transport
        assert transport is not None
        while True:
            chunk = await transport.read(TICK)
            if chunk is None:
                break
            if chunk:
                self._last_output = time.monotonic()
                if self.parser.in_turn:
                    self._output_since_prompt = True
                self._dirty = True
                self.parser.feed(chunk)
                answer = self.parser.replies()
                if answer:
                    with contextlib.suppress(ProcessError):
                        await transport.write(answer, timeout=1.0)
            self._tick()
        code = None
        with contextlib.suppress(Exception):
            code = await transport.wait(5.0)
        tail = self._screen_tail()
        self._finish_turn(StopReason.ERROR, f"{self.agent_id} exited during the turn")
        if self._stopping:
            self._end(EndReason.COMPLETED, code, None)
        else:
            self._end(EndReason.FAILED, code, tail)

    def _tick(self) -> None:
        if not self.parser.in_turn:
            return
        if self._dirty:  # the diff is computed only when the screen changed
            self._dirty = False
            self._emit(self.parser.deltas())
        now = time.monotonic()
        if self._cancel_at is not None:
            quiet = self._settled(self.profile.cancel_settle) and now - self._cancel_at >= 0.1
            if quiet or now - self._cancel_at >= CANCEL_BOUND:
                if not quiet and self.parser.busy():
                    self._emit(
                        [
                            WarningEvent(
                                message="the terminal still looks busy after the cancel keys"
                            )
                        ]
                    )
                self._finish_turn(StopReason.CANCELLED)
            return
        if now - self._prompt_at >= self.profile.turn_timeout:
            self._finish_turn(
                StopReason.ERROR,
                f"the screen did not settle within {self.profile.turn_timeout:.0f} s",
            )
        elif self._output_since_prompt and self._settled(self.profile.settle):
            self._finish_turn(StopReason.END_TURN)

    def _finish_turn(self, reason: StopReason, error: str | None = None) -> None:
        if self.parser.in_turn:
            self._emit(self.parser.end_turn(reason, error))
        self._cancel_at = None
        self._turn_done.set()

    # ── prompts ──
    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        keys = self._keystrokes(text)
        if attachments:
            raise UnsupportedOperation(self.agent_id, "attachments (a terminal takes text only)")
        if self.transport is None or self.transport.at_eof:
            raise SessionError(f"{self.agent_id} is not running")
        if self.parser.in_turn:
            raise SessionError(
                f"{self.agent_id}: a turn is running; the shell grade takes one prompt at a time"
            )
        self._turn_mark.mark()
        self.parser.begin_turn(text)
        self._turn_done.clear()
        self._output_since_prompt = False
        self._prompt_at = time.monotonic()
        for data, pause in keys:
            await self.transport.write(data)
            if pause:
                await asyncio.sleep(pause)

    def _keystrokes(self, text: str) -> list[tuple[bytes, float]]:
        try:
            return injection(self.profile.injection, text, paste_delay=self.profile.paste_delay)
        except UnsupportedOperation:
            raise UnsupportedOperation(
                self.agent_id,
                f"sending a prompt: promptInjection is {self.profile.injection!r} "
                "(the user types into the terminal)",
            ) from None

    async def interrupt(self) -> None:
        """Type the cancel keys (Ctrl-C); the turn ends ``cancelled`` once the screen settles,
        within :data:`CANCEL_BOUND` seconds."""
        if self.transport is None:
            raise SessionError(f"{self.agent_id} is not running")
        if not self.parser.in_turn:
            return
        self._cancel_at = time.monotonic()
        with contextlib.suppress(ProcessError):
            await self.transport.write(self.profile.cancel_keys)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._turn_done.wait(), CANCEL_BOUND + 1.0)

    async def query_status(self) -> dict[str, Any]:
        alive = self.transport is not None and self.transport.returncode is None
        return {"alive": alive, "busy": self.parser.in_turn, "screen": self.parser.display()}


def shell_class_for(manifest: Manifest) -> type[ShellAdapter]:
    """A shell-grade adapter class for any manifest (a custom one with no structured profile):
    its ``launchCommand`` in a terminal, configured by its ``presentation.shell``. A profile
    that cannot be honoured is a ``ConfigError`` now, not at launch."""
    profile = shell_profile(manifest)
    attrs: dict[str, Any] = {
        "agent_id": manifest.id,
        "manifest_id": manifest.id,
        "display_name": manifest.display_name,
        "cli_binary": profile.argv[0],
        "shell_manifest": manifest,
        "__module__": __name__,
    }
    return type(f"Shell[{manifest.id}]", (ShellAdapter,), attrs)


class AiderShellAdapter(ShellAdapter):
    """aider (aider-chat, PyPI) in its own terminal UI."""

    agent_id = "aider-shell"
    manifest_id = "aider-shell"
    display_name = "aider (shell)"
    cli_binary = "aider"


class ClaudeTuiAdapter(ShellAdapter):
    """Claude Code's interactive TUI (prompts pasted, then Enter)."""

    agent_id = "claude-tui"
    manifest_id = "claude-tui"
    display_name = "Claude Code (TUI)"
    cli_binary = "claude"


class CodexTuiAdapter(ShellAdapter):
    """Codex's interactive TUI (prompts pasted, then Enter)."""

    agent_id = "codex-tui"
    manifest_id = "codex-tui"
    display_name = "Codex (TUI)"
    cli_binary = "codex"
