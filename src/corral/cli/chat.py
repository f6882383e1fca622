"""``corral chat AGENT`` — an interactive terminal chat on a persistent session.

The session manager runs in this process (no server needed) on the same database as ``corral
serve``. Typing while a turn runs queues the prompt; approvals and questions are asked inline (the
next line answers them); Ctrl-C stops the current turn, not the session; ``/quit`` or Ctrl-D leaves
with the session kept (``--session ID`` resumes it later). Other commands: ``/stop``, ``/status``,
``/queue``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import typer

from .._paths import home_dir
from ..errors import ConfigError, SessionError
from ..events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    Envelope,
    QuestionAnswered,
    QuestionAsked,
    TextDelta,
    TurnCompleted,
)
from ..intents import parse_allowed_commands, parse_intent
from ..sessions import PromptState, SessionManager, SessionSpec, SessionState
from ._intent import allowed_commands_option, intent_option
from ._run_render import PlainRenderer, status_line
from .sessions import render_event

_STOP = "\x00stop"

_DECISIONS = {
    "y": ApprovalDecision.ALLOW,
    "yes": ApprovalDecision.ALLOW,
    "a": ApprovalDecision.ALLOW_ALWAYS,
    "always": ApprovalDecision.ALLOW_ALWAYS,
    "n": ApprovalDecision.DENY,
    "no": ApprovalDecision.DENY,
}


def register(root: typer.Typer) -> None:
    @root.command("chat")
    def chat(
        agent: str = typer.Argument(..., help="Adapter id of the agent to chat with."),
        model: str | None = typer.Option(None),
        effort: str | None = typer.Option(None),
        cwd: str | None = typer.Option(None, help="Working directory (default: the current one)."),
        intent: str | None = intent_option(),
        allowed_commands: str | None = allowed_commands_option(),
        session: str | None = typer.Option(None, "--session", help="Resume this session."),
        db: str | None = typer.Option(None, help="SQLite database (default: corral's own)."),
    ) -> None:
        """Chat with an agent in the terminal on a persistent session."""
        try:
            parsed_intent = parse_intent(intent)
            commands = parse_allowed_commands(allowed_commands)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        spec = SessionSpec(
            adapter_id=agent,
            model=model,
            effort=effort,
            cwd=cwd or os.getcwd(),
            intent=parsed_intent,
            allowed_commands=commands,
        )
        path = Path(db or os.environ.get("CORRAL_DB") or home_dir() / "corral.db")
        asyncio.run(Chat(path, spec, session).run())


class Chat:
    def __init__(self, db: Path, spec: SessionSpec, session_id: str | None) -> None:
        self.db = db
        self.spec = spec
        self.session_id = session_id
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.pending: list[ApprovalRequested | QuestionAsked] = []
        self.busy = False
        self.mid_line = False
        self.renderer = PlainRenderer()

    def out(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    async def run(self) -> None:
        async with SessionManager(self.db) as mgr:
            sid = await self._open(mgr)
            loop = asyncio.get_running_loop()
            loop.add_reader(sys.stdin.fileno(), self._read_stdin)
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
            follower = asyncio.create_task(self._follow(mgr, sid))
            try:
                self.out(
                    f"chat with {self.spec.adapter_id} — session {sid}\n"
                    "Ctrl-C stops the turn · /quit leaves (session kept)\n> "
                )
                await self._input_loop(mgr, sid)
            finally:
                loop.remove_reader(sys.stdin.fileno())
                loop.remove_signal_handler(signal.SIGINT)
                follower.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await follower
        self.out(
            f"\nsession {sid} kept; resume with: corral chat {self.spec.adapter_id} --session {sid}\n"
        )

    async def _open(self, mgr: SessionManager) -> str:
        if self.session_id is None:
            return (await mgr.create_session(self.spec)).id
        record = mgr.get_session(self.session_id)
        if record.state == SessionState.CREATED:
            await mgr.start(record.id)
        else:
            await mgr.resume(record.id)
        return record.id

    def _read_stdin(self) -> None:
        data = os.read(sys.stdin.fileno(), 65536)
        if not data:
            self.lines.put_nowait(None)
            return
        for line in data.decode(errors="replace").splitlines():
            self.lines.put_nowait(line)

    def _interrupt(self) -> None:
        if self.busy:
            self.out("\n^C stopping the turn (the session stays)\n")
            self.lines.put_nowait(_STOP)  # handled by the input loop, which owns the awaits
        else:
            self.out("\n(no turn running; /quit or Ctrl-D leaves)\n> ")

    async def _follow(self, mgr: SessionManager, sid: str) -> None:
        async for env in mgr.subscribe(sid, after=mgr.get_session(sid).last_seq):
            self._show(env)

    def _show(self, env: Envelope) -> None:
        ev = env.event
        if isinstance(ev, ApprovalRequested | QuestionAsked):
            self.pending.append(ev)
        elif isinstance(ev, ApprovalResolved | QuestionAnswered):
            self.pending = [p for p in self.pending if p.request_id != ev.request_id]
        raw = getattr(ev, "raw", None)
        if isinstance(raw, dict) and raw.get("state") == PromptState.SENDING:
            self.busy = True
        text = render_event(env, self.renderer)  # the rules every terminal view follows
        if text is None:
            return
        self.out(text)
        self.mid_line = isinstance(ev, TextDelta)
        if isinstance(ev, ApprovalRequested):
            self.out("allow? [y]es / [n]o / [a]lways > ")
        elif isinstance(ev, QuestionAsked):
            self.out("answer > ")
        elif isinstance(ev, TurnCompleted):
            self.busy = False
            self.out("> ")

    async def _input_loop(self, mgr: SessionManager, sid: str) -> None:
        while True:
            line = await self.lines.get()
            if line is None or line.strip() == "/quit":
                return
            if line == _STOP:
                with contextlib.suppress(SessionError):
                    await mgr.stop_turn(sid)
                continue
            text = line.strip()
            if not text:
                continue
            if self.pending:
                await self._answer(mgr, sid, self.pending[0], text)
            elif text == "/stop":
                await mgr.stop_turn(sid)
            elif text == "/status":
                st = await mgr.status(sid)
                self.out(status_line(st) + "\n> ")
            elif text == "/queue":
                undelivered = [p for p in mgr.prompts(sid) if p.state != PromptState.DELIVERED]
                for n, p in enumerate(undelivered, 1):
                    self.out(f"  {n}. {p.state}: {p.text[:60]!r}\n")
                self.out("> " if undelivered else "  (nothing waiting)\n> ")
            else:
                prompt = mgr.send(sid, text)
                waiting = mgr.queue.counts(sid).get(PromptState.QUEUED, 0)
                if self.busy and waiting:
                    short = prompt.text[:40]
                    self.out(f"  queued ({waiting} waiting): {short!r}, sent when the turn ends\n")

    async def _answer(
        self, mgr: SessionManager, sid: str, req: ApprovalRequested | QuestionAsked, text: str
    ) -> None:
        if isinstance(req, ApprovalRequested):
            decision = _DECISIONS.get(text.lower())
            if decision is None:
                self.out("please answer y, n or a > ")
                return
            await mgr.respond_approval(sid, req.request_id, decision)
        else:
            question = req.questions[0]
            answer = text
            if text.isdigit() and 0 < int(text) <= len(question.options):
                answer = question.options[int(text) - 1]
            await mgr.answer_question(sid, req.request_id, {question.question: answer})
