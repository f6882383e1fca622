"""``corral job``: seed 002's ``run`` contract — one headless job, configured by its environment.

``corral job run AGENT`` reads ``AGENT_PROMPT``, ``AGENT_MODE`` (work / act-pr / review),
``AGENT_COMMANDS``, ``AGENT_MODEL`` (optional, passed through untranslated and never empty),
``AGENT_CWD`` and the ``BOARD_*`` passthrough; it launches the agent the way ``corral run`` does
(same adapter resolution and construction), writes the job log to stdout ending with the agent's
final text, and parses the marker lines (``NOT READY:``, ``RELEVANCE REVIEW:``, ``PR REVIEW:``,
``ADDRESSED:``) into a structured result (``--json`` prints it instead of the log). With
``BOARD_PORT`` set, every action is POSTed to that board with ``BOARD_AGENT_ID`` / ``BOARD_TASK``.

Headless: there is nobody at a permission prompt, so every approval request is denied.

Exit codes: 0 completed · 1 the agent failed · 2 a bad or missing variable · 4 unknown agent ·
5 the intent cannot be enforced by this agent · 124 timed out · 130 interrupted.

``corral job export-adapter AGENT DIR`` writes a seed-002 adapter directory (``run`` and ``wire``
executables calling corral), for a board that picks its adapter by directory.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import stat
import sys
import uuid
from pathlib import Path
from typing import Any

import typer

from .._paths import read_token
from ..adapters._options import guard_of
from ..adapters.base import BaseAdapter, construct
from ..board import _job
from ..board._poster import BoardPoster
from ..errors import CorralError, IntentRefused
from ..events import (
    ApprovalDecision,
    ApprovalRequested,
    EndReason,
    QuestionAsked,
    Sequencer,
    SessionEnded,
    StopReason,
    TextComplete,
    TextDelta,
    TurnCompleted,
)
from ..events.board import BoardProjector
from ..intents import ApprovalGuard, Intent
from ..registry import launch_gate
from ._common import JSON_OPTION, print_json
from .run import adapter_class

app = typer.Typer(name="job", help="Headless jobs: seed 002's run contract.", no_args_is_help=True)

DEFAULT_TIMEOUT = 3600.0


def launch_intent(offered: dict[str, Any], mode: _job.JobMode, commands: tuple[str, ...]) -> bool:
    """THE one place AGENT_MODE and AGENT_COMMANDS reach the launch; returns whether enforced.

    ``AGENT_MODE`` is the intent (work / act-pr / review) and ``AGENT_COMMANDS`` the project's
    allowed command prefixes; the adapter renders both into its vendor's rules, and
    :func:`~corral.adapters.base.construct` raises ``IntentRefused`` (exit 5) for an intent the
    adapter cannot enforce, before any process starts.
    """
    offered["intent"] = Intent(mode)
    if commands:
        offered["allowed_commands"] = commands
    return True


class _Log:
    """The job log: plain lines on stdout, or nothing (``--json``)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def line(self, text: str) -> None:
        if not self.quiet:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()


class _Outcome:
    def __init__(self) -> None:
        self.stop: StopReason | None = None
        self.ended: SessionEnded | None = None
        self.texts: list[str] = []
        self.deltas: list[str] = []
        self.result_text: str | None = None
        self.error: str | None = None

    def final_text(self) -> str:
        if self.result_text:
            return self.result_text
        if self.texts:
            return "\n".join(self.texts)
        return "".join(self.deltas)


async def _drive(
    adapter: BaseAdapter,
    prompt: str,
    session_id: str,
    projector: BoardProjector,
    poster: BoardPoster | None,
    log: _Log,
    guard: ApprovalGuard | None = None,
) -> _Outcome:
    outcome = _Outcome()
    sequencer = Sequencer(session_id, adapter.agent_id)
    try:
        await adapter.start(session_id)
        await adapter.send(prompt, [])
        async for event in adapter.stream():
            board_event = projector.project_event(session_id, event)
            if board_event is not None:
                if poster is not None:
                    poster.post(board_event)
                if not board_event.running:
                    ok = "" if board_event.ok is None else (" ok" if board_event.ok else " FAILED")
                    log.line(f"[{board_event.kind}{ok}] {board_event.summary}")
            sequencer.wrap(event)
            if isinstance(event, ApprovalRequested) and guard is not None:
                # Nobody is at a prompt: the intent decides, and what it does not grant is denied.
                verdict = guard.check(event)
                if verdict.allowed:
                    await adapter.respond_approval(event.request_id, ApprovalDecision.ALLOW)
                else:
                    message = guard.denial_message(event, verdict)
                    log.line(f"[denied] {message}")
                    await adapter.respond_approval(
                        event.request_id, ApprovalDecision.DENY, message=message
                    )
            elif isinstance(event, ApprovalRequested | QuestionAsked):
                await adapter.respond_approval(
                    event.request_id,
                    ApprovalDecision.DENY,
                    message="Denied: a headless job has nobody to approve this.",
                )
            elif isinstance(event, TextComplete) and event.parent_call_id is None:
                outcome.texts.append(event.text)
            elif isinstance(event, TextDelta):
                outcome.deltas.append(event.text)
            elif isinstance(event, TurnCompleted) and outcome.stop is None:
                outcome.stop = event.stop_reason
                outcome.result_text = event.result_text
                outcome.error = event.error
                await adapter.stop()
            elif isinstance(event, SessionEnded):
                outcome.ended = event
                outcome.error = outcome.error or event.message
    finally:
        await adapter.stop()
    return outcome


def run_job(
    agent: str,
    env: _job.JobEnv,
    *,
    timeout: float,
    quiet: bool,
    binary: str | None = None,
    extra_args: list[str] | None = None,
) -> _job.JobResult:
    asyncio.run(launch_gate(agent))  # a stale profile re-verifies first, or the job is refused
    cls = adapter_class(agent)
    offered: dict[str, Any] = {"cwd": str(env.cwd)}
    if env.model:  # never an empty model: absent means the vendor's default
        offered["model"] = env.model
    if binary:
        offered["binary"] = binary
    if extra_args:
        offered["extra_args"] = list(extra_args)
    enforced = launch_intent(offered, env.mode, env.commands)
    log = _Log(quiet)
    session_id = str(uuid.uuid4())
    projector = BoardProjector(agent=env.board_agent, task=env.board_task)
    poster = (
        BoardPoster(f"http://127.0.0.1:{env.board_port}", read_token()) if env.board_port else None
    )
    log.line(f"[job] {agent} mode={env.mode} session={session_id} cwd={env.cwd}")
    status: Any = "failed"
    error: str | None = None
    outcome = _Outcome()
    try:
        adapter = construct(cls, **offered)  # refuses an unenforceable intent, before any process
        outcome = asyncio.run(
            asyncio.wait_for(
                _drive(adapter, env.prompt, session_id, projector, poster, log, guard_of(adapter)),
                timeout,
            )
        )
        error = outcome.error
        ok_end = outcome.ended is None or outcome.ended.reason is not EndReason.FAILED
        if outcome.stop is StopReason.END_TURN and ok_end:
            status = "completed"
        elif outcome.stop is StopReason.CANCELLED:
            status = "interrupted"
        else:
            error = (
                error
                or f"the turn ended with {outcome.stop.value if outcome.stop else 'no result'}"
            )
    except TimeoutError:
        status, error = "timeout", f"the job did not finish within {timeout:g}s"
    except KeyboardInterrupt:
        status, error = "interrupted", "interrupted"
    except CorralError as exc:
        if isinstance(exc, IntentRefused):
            status = "refused"
        error = str(exc)
    finally:
        if poster is not None:
            poster.close()
    final = outcome.final_text()
    code = {
        "completed": _job.EXIT_COMPLETED,
        "timeout": _job.EXIT_TIMEOUT,
        "interrupted": _job.EXIT_INTERRUPTED,
        "refused": _job.EXIT_INTENT_REFUSED,
    }.get(status, _job.EXIT_AGENT_FAILED)
    if error:
        log.line(f"[job] {status}: {error}")
    else:
        log.line(f"[job] {status}")
    if final:
        log.line(final)
    return _job.JobResult(
        status=status,
        exit_code=code,
        agent=agent,
        mode=env.mode,
        intent_enforced=enforced,
        session_id=session_id,
        final_text=final,
        markers=_job.parse_markers(final),
        model=env.model,
        error=error,
        board_events=poster.sent if poster else 0,
        board_dropped=poster.dropped if poster else 0,
    )


@app.command("run")
def run(
    agent: str = typer.Argument(..., help="Adapter id (claude-code, codex, opencode, gemini, …)."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", help="Seconds before giving up."),
    binary: str | None = typer.Option(None, "--binary", hidden=True, help="Agent executable."),
    agent_arg: list[str] = typer.Option(
        [], "--agent-arg", help="Extra argument for the agent CLI (repeatable)."
    ),
    json_out: bool = JSON_OPTION,
) -> None:
    """Run one headless job from AGENT_* / BOARD_* variables; the exit code is the outcome."""
    env = _job.job_env(os.environ, default_cwd=Path.cwd())
    result = run_job(
        agent, env, timeout=timeout, quiet=json_out, binary=binary, extra_args=agent_arg
    )
    if json_out:
        print_json(result)
    raise typer.Exit(result.exit_code)


_RUN = """#!/bin/sh
# seed-002 adapter `run` for {agent}, generated by `corral job export-adapter` (corral {version}).
# The AGENT_* and BOARD_* environment is the contract; corral reads it as it is.
exec {python} -m corral job run {agent} "$@"
"""

_WIRE = """#!/bin/sh
# seed-002 adapter `wire` for {agent}, generated by `corral job export-adapter` (corral {version}).
# Usage: wire PROJECT_ROOT [--dry-run]; events go to the board on BOARD_PORT.
root="$1"; shift
exec {python} -m corral wire {agent} "$root" --url "http://127.0.0.1:${{BOARD_PORT:-8765}}" "$@"
"""


def export_adapter_files(agent: str, directory: Path) -> list[Path]:
    """Write ``run`` and ``wire`` into ``directory`` (created); returns the paths written."""
    from .._version import __version__

    adapter_class(agent)  # an unknown agent is refused before anything is written
    directory.mkdir(parents=True, exist_ok=True)
    fields = {"agent": shlex.quote(agent), "python": shlex.quote(sys.executable)}
    written = []
    for name, template in (("run", _RUN), ("wire", _WIRE)):
        path = directory / name
        path.write_text(template.format(version=__version__, **fields))
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(path)
    return written


@app.command("export-adapter")
def export_adapter(
    agent: str = typer.Argument(..., help="Adapter id the exported adapter runs."),
    directory: Path = typer.Argument(..., help="The adapter directory to write (run, wire)."),
) -> None:
    """Write a seed-002 adapter directory (run + wire) that uses corral for AGENT.

    A board picks adapters by directory name, and one of the same name in its override folder
    (bench: manager/local/adapters/NAME) replaces the built-in one: export there to switch.
    """
    for path in export_adapter_files(agent, directory):
        typer.echo(str(path))
