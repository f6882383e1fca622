"""How ``corral run`` shows events to a person (rich) or a program (JSONL envelopes)."""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.markup import escape as esc
from rich.syntax import Syntax

from ..events import (
    ApprovalRequested,
    ApprovalResolved,
    Envelope,
    Error,
    Event,
    FileDiff,
    QuestionAnswered,
    QuestionAsked,
    ReasoningDelta,
    SessionEnded,
    SessionStarted,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolCallUpdated,
    TurnCompleted,
    Usage,
    Warning,
    encode,
)


class JsonRenderer:
    """One JSON envelope per line on stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def show(self, envelope: Envelope) -> None:
        self.out.write(encode(envelope).decode() + "\n")
        self.out.flush()


class HumanRenderer:
    """Streamed text on stdout; tool calls, diffs and status on stderr, so stdout stays the answer."""

    def __init__(self, out: Console | None = None, err: Console | None = None) -> None:
        self.out = out or Console(highlight=False)
        self.err = err or Console(stderr=True, highlight=False)
        self._streamed: set[str | None] = set()
        self._mid_line = False
        self._tools: dict[str, str] = {}
        self._shown: set[str] = set()

    def show(self, envelope: Envelope) -> None:
        self.render(envelope.event)

    def _newline(self) -> None:
        if self._mid_line:
            self.out.print()
            self._mid_line = False

    def _show_call(self, call_id: str, parent: str | None) -> None:
        if call_id in self._shown:
            return
        self._shown.add(call_id)
        self._newline()
        indent = "  " if parent else ""
        self.err.print(
            f"{indent}[cyan]⏺[/] {esc(self._tools.get(call_id, call_id))}", highlight=False
        )

    def render(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if event.parent_call_id:
                return
            self._streamed.add(event.message_id)
            self.out.print(event.text, end="", markup=False, soft_wrap=True)
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, TextComplete):
            if event.parent_call_id:
                self.err.print(f"  [dim]↳ {esc(event.text)}[/]", markup=True)
            elif event.message_id not in self._streamed:
                self.out.print(event.text, markup=False)
            else:
                self._newline()
        elif isinstance(event, ReasoningDelta):
            return
        elif isinstance(event, SessionStarted):
            self.err.print(f"[dim]{esc(event.agent.name)} · {esc(event.cwd or '.')}[/]")
        elif isinstance(event, ToolCallStarted):
            # The input often streams in after the start: show the call once its title is known.
            self._tools[event.call_id] = event.title or event.name
            if event.input:
                self._show_call(event.call_id, event.parent_call_id)
        elif isinstance(event, ToolCallUpdated):
            if event.title:
                self._tools[event.call_id] = event.title
            self._show_call(event.call_id, event.parent_call_id)
        elif isinstance(event, ToolCallCompleted):
            self._show_call(event.call_id, event.parent_call_id)
            label = self._tools.get(event.call_id, event.name or event.call_id)
            self.err.print(f"  [green]✓[/] {esc(label)}", highlight=False)
        elif isinstance(event, ToolCallFailed):
            self._show_call(event.call_id, event.parent_call_id)
            label = self._tools.get(event.call_id, event.name or event.call_id)
            why = (
                "denied"
                if event.denied
                else event.error.strip().splitlines()[0][:200]
                if event.error and event.error.strip()
                else "failed"
            )
            self.err.print(f"  [red]✗[/] {esc(label)} [dim]({esc(why)})[/]", highlight=False)
        elif isinstance(event, FileDiff):
            if event.diff:
                self.err.print(
                    Syntax(event.diff, "diff", theme="ansi_dark", background_color="default")
                )
            else:
                self.err.print(f"  [yellow]changed[/] {esc(event.path)}")
        elif isinstance(event, ApprovalRequested):
            self._newline()
            self.err.print(
                f"[yellow]? permission:[/] {esc(event.title or event.tool_name)}", highlight=False
            )
        elif isinstance(event, ApprovalResolved):
            self.err.print(f"  [dim]→ {event.decision.value}[/]")
        elif isinstance(event, QuestionAsked):
            for q in event.questions:
                self.err.print(
                    f"[yellow]? {esc(q.question)}[/] {esc(' / '.join(q.options))}", highlight=False
                )
        elif isinstance(event, QuestionAnswered):
            self.err.print(f"  [dim]→ {esc(', '.join(event.answers.values()))}[/]")
        elif isinstance(event, Usage):
            parts = [f"in {event.input_tokens or 0}", f"out {event.output_tokens or 0}"]
            if event.cost_usd is not None:
                parts.append(f"${event.cost_usd:.4f}")
            self.err.print(f"[dim]{' · '.join(parts)}[/]")
        elif isinstance(event, TurnCompleted):
            self._newline()
            if event.error:
                self.err.print(
                    f"[red]turn ended: {event.stop_reason.value}: {esc(event.error)}[/]",
                    highlight=False,
                )
            elif event.stop_reason.value != "end_turn":
                self.err.print(f"[yellow]turn ended: {event.stop_reason.value}[/]")
        elif isinstance(event, Warning):
            self.err.print(f"[yellow]warning:[/] {esc(event.message)}", highlight=False)
        elif isinstance(event, Error):
            self.err.print(f"[red]error:[/] {esc(event.message)}", highlight=False)
        elif isinstance(event, SessionEnded):
            self._newline()
            if event.reason.value == "failed":
                self.err.print(
                    f"[red]{esc(event.message or 'the agent failed')}[/]", highlight=False
                )
                if event.stderr_tail:
                    self.err.print(event.stderr_tail[-2000:], markup=False)
