"""What ``corral run`` does, without Typer: the command's body, :func:`run_once` and the
approval and question answers.

``cli/run.py`` declares the Typer command and calls :func:`run_command`; ``cli/_run_fast.py``
calls it for a plain command line without building the Typer app (issue 20: ``corral run`` adds
≤ 50 ms over the bare CLI, and Typer's parameter coercion alone loads pydantic). Nothing here
imports typer or rich up front: rich loads for a human view, a terminal prompt or an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from .._process import kill_all_now
from ..adapters._options import LaunchOptions, guard_of
from ..adapters._turns import DEFAULT_IDLE_TIMEOUT, TurnWatchdog, check_prompt
from ..adapters.base import Attachment, BaseAdapter, construct
from ..errors import ConfigError
from ..events import (
    ApprovalDecision,
    ApprovalRequested,
    EndReason,
    QuestionAsked,
    Sequencer,
    SessionEnded,
    StopReason,
    ToolCallFailed,
    ToolCallStarted,
    ToolCallUpdated,
    TurnCompleted,
    WarningEvent,
)
from ._run_render import HumanRenderer, JsonRenderer

if TYPE_CHECKING:
    from .._process._early import EarlyProcess
    from ..intents import ApprovalGuard


def adapter_class(agent: str) -> type[BaseAdapter]:
    """The adapter class for ``agent``: the registry's answer, as for every other caller.

    A built-in id is answered without building the registry (its entry-point scan and drop-ins
    cannot change the answer, ``registry/_builtin.py``); anything else builds it."""
    from ..registry._builtin import resolve_builtin

    cls = resolve_builtin(agent)
    if cls is not None:
        return cls
    from ..registry import Registry

    return Registry().resolve(agent)


def load_images(paths: list[Path]) -> list[Attachment]:
    if not paths:
        return []
    import mimetypes  # only for --image: not on the way to every spawn

    attachments = []
    for path in paths:
        if not path.is_file():
            raise ConfigError(f"no such image file: {path}")
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if not media_type.startswith("image/"):
            raise ConfigError(f"{path} is not an image ({media_type})")
        attachments.append(Attachment(path=str(path), media_type=media_type, name=path.name))
    return attachments


def run_command(
    agent: str,
    prompt: str,
    *,
    model: str | None = None,
    cwd: Path | None = None,
    resume: str | None = None,
    image: list[Path] | None = None,
    effort: str | None = None,
    intent: str | None = None,
    allowed_commands: str | None = None,
    vendor_permission_mode: str | None = None,
    yes: bool = False,
    binary: str | None = None,
    agent_arg: list[str] | None = None,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    json_out: bool = False,
    early: EarlyProcess | None = None,
) -> int:
    """Send one prompt to an agent and stream its normalized events; the exit code.

    ``early``: the agent already started for this command line (``cli/_run_early.py``); the
    adapter's first launch gets it when it asks for exactly its launch (the caller discards it
    when nothing claimed it: ``cli/_run_fast.py``, and an ``atexit`` hook)."""
    attachments = load_images(image or [])
    check_prompt(prompt, attachments)
    if idle_timeout < 0:
        raise ConfigError("--idle-timeout must be 0 (off) or a positive number of seconds")
    from ..registry._builtin import builtin_id
    from ..registry._gate import launch_gate

    # A stale profile re-verifies first, or the run is refused; an alias is gated as its id.
    asyncio.run(launch_gate(builtin_id(agent) or agent))
    cls = adapter_class(agent)
    session_ids: list[str] = []
    options = LaunchOptions.create(
        cwd=(cwd or Path.cwd()).resolve(),
        model=model,
        effort=effort,
        intent=intent,
        allowed_commands=allowed_commands,
        binary=binary,
        extra_args=agent_arg or [],
        resume_session_id=resume,
        on_session_id=session_ids.append,
        vendor_permission_mode=vendor_permission_mode,
    )
    if resume is not None:  # never a silent fork (docs/handoff.md#resume-safety)
        from ..sessions._resume_check import check_resume

        check_resume(
            cls,
            session_id=resume,
            agent_sid=resume,
            cwd=str(options.cwd),
            events=(),
            offer="run without --resume for a fresh session",
        )
    adapter = construct(cls, options)
    if early is not None:
        from .._process._adopt import hand_over

        hand_over(adapter, early)
    code = asyncio.run(
        run_once(
            adapter,
            prompt,
            attachments,
            json_out=json_out,
            allow_all=yes,
            interactive=sys.stdin.isatty(),
            idle_timeout=idle_timeout,
        )
    )
    if session_ids and not json_out:
        from rich.console import Console

        Console(stderr=True).print(
            f"[dim]session {session_ids[-1]} · continue with --resume {session_ids[-1]}[/]"
        )
    return code


async def run_once(
    adapter: BaseAdapter,
    prompt: str,
    attachments: list[Attachment],
    *,
    json_out: bool,
    allow_all: bool,
    interactive: bool,
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
) -> int:
    """Run one prompt to its end; returns the exit code."""
    check_prompt(prompt, attachments)
    renderer: JsonRenderer | HumanRenderer = JsonRenderer() if json_out else HumanRenderer()
    sequencer = Sequencer(str(uuid.uuid4()), adapter.agent_id)
    loop = asyncio.get_running_loop()
    interrupts = 0
    terminated: int | None = None
    signal_tasks: set[asyncio.Task[None]] = set()
    main = asyncio.current_task()
    watchdog = TurnWatchdog(adapter, idle_timeout, lambda e: renderer.show(sequencer.wrap(e)))

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        action = adapter.interrupt() if interrupts == 1 and adapter.cap_cancel else adapter.stop()
        task = loop.create_task(action)
        signal_tasks.add(task)
        task.add_done_callback(signal_tasks.discard)

    async def teardown() -> None:
        # The agent goes first, whatever it does: stop() within a bound, else SIGKILL its group.
        try:
            await asyncio.wait_for(adapter.stop(), 10.0)
        except BaseException:
            kill_all_now()
        await asyncio.sleep(2.0)
        if main is not None and not main.done():
            kill_all_now()
            main.cancel()

    def on_terminate(sig: signal.Signals) -> None:
        nonlocal terminated
        if terminated is not None:
            kill_all_now()
            return
        terminated = 128 + int(sig)
        task = loop.create_task(teardown())
        signal_tasks.add(task)
        task.add_done_callback(signal_tasks.discard)

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, on_terminate, sig)
    outcome: StopReason | None = None
    ended: SessionEnded | None = None
    watching: asyncio.Task[None] | None = None
    try:
        await adapter.start(sequencer.session_id)
        await adapter.send(prompt, attachments)
        watchdog.turn_started()
        watching = loop.create_task(watchdog.run())
        guard = guard_of(adapter)
        calls: dict[str, ToolCallStarted] = {}
        async for event in adapter.stream():
            watchdog.saw(event)
            if guard is not None and isinstance(event, ToolCallStarted):
                calls[event.call_id] = event
            elif (
                guard is not None and isinstance(event, ToolCallUpdated) and event.call_id in calls
            ):
                calls[event.call_id] = _updated(calls[event.call_id], event)
            if guard is not None and isinstance(event, ToolCallFailed) and event.call_id in calls:
                renderer.show(sequencer.wrap(event))
                reason = guard.forbidden_call(calls.pop(event.call_id))
                if reason is not None:
                    renderer.show(
                        sequencer.wrap(WarningEvent(message=reason, code="intent_denied"))
                    )
                continue
            if isinstance(event, ApprovalRequested) and guard is not None:
                calls.pop(event.call_id or "", None)  # the guard explains its own denial
                await _guarded(
                    adapter,
                    guard,
                    event,
                    renderer,
                    sequencer,
                    interactive=interactive and not json_out,
                    allow_all=allow_all,
                )
                continue
            renderer.show(sequencer.wrap(event))
            if isinstance(event, ApprovalRequested):
                await _approve(
                    adapter, event, allow_all=allow_all, interactive=interactive and not json_out
                )
            elif isinstance(event, QuestionAsked):
                await _answer(
                    adapter, event, allow_all=allow_all, interactive=interactive and not json_out
                )
            elif isinstance(event, TurnCompleted) and outcome is None:
                outcome = event.stop_reason
                await adapter.stop()
            elif isinstance(event, SessionEnded):
                ended = event
    except asyncio.CancelledError:
        if terminated is None:
            raise
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(sig)
        if watching is not None:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
        try:
            await asyncio.wait_for(adapter.stop(), 15.0)
        except BaseException:
            kill_all_now()
            raise
        finally:
            for task in list(signal_tasks):
                task.cancel()
    if terminated is not None:
        return terminated
    if watchdog.fired:
        return 1
    if outcome is StopReason.CANCELLED or interrupts:
        return 130
    if outcome is StopReason.END_TURN and (ended is None or ended.reason is not EndReason.FAILED):
        return 0
    return 1


def _updated(call: ToolCallStarted, update: ToolCallUpdated) -> ToolCallStarted:
    """``call`` with what ``update`` adds (its full input, once streamed)."""
    return msgspec.structs.replace(
        call,
        input=update.input if update.input is not None else call.input,
        file=update.file or call.file,
        cmd=update.cmd or call.cmd,
        title=update.title or call.title,
    )


async def _guarded(
    adapter: BaseAdapter,
    guard: ApprovalGuard,
    event: ApprovalRequested,
    renderer: JsonRenderer | HumanRenderer,
    sequencer: Sequencer,
    *,
    interactive: bool,
    allow_all: bool,
) -> None:
    """Under an intent: a forbidden request is denied and shown as a warning, never as a request;
    a granted one is allowed (a run has no human), or asked at a terminal unless ``--yes``."""
    verdict = guard.check(event)
    if not verdict.allowed:
        message = guard.denial_message(event, verdict)
        renderer.show(sequencer.wrap(WarningEvent(message=message, code="intent_denied")))
        await adapter.respond_approval(event.request_id, ApprovalDecision.DENY, message=message)
        return
    renderer.show(sequencer.wrap(event))
    await _approve(adapter, event, allow_all=allow_all or not interactive, interactive=interactive)


async def _approve(
    adapter: BaseAdapter, event: ApprovalRequested, *, allow_all: bool, interactive: bool
) -> None:
    if allow_all:
        decision = ApprovalDecision.ALLOW
    elif interactive:
        from rich.prompt import Prompt

        from ._common import err_console

        choice = await asyncio.to_thread(
            Prompt.ask,
            f"Allow {event.title or event.tool_name}? [y]es / [a]lways / [n]o",
            choices=["y", "a", "n"],
            default="n",
            console=err_console,
        )
        decision = {"y": ApprovalDecision.ALLOW, "a": ApprovalDecision.ALLOW_ALWAYS}.get(
            choice, ApprovalDecision.DENY
        )
    else:
        decision = ApprovalDecision.DENY
    message = (
        None
        if decision is not ApprovalDecision.DENY
        else "Denied by corral run (no terminal to ask; use --yes)."
    )
    if decision is ApprovalDecision.DENY and interactive:
        message = "The user denied this action."
    await adapter.respond_approval(event.request_id, decision, message=message)


async def _answer(
    adapter: BaseAdapter, event: QuestionAsked, *, allow_all: bool, interactive: bool
) -> None:
    if not interactive and not allow_all:
        await adapter.respond_approval(
            event.request_id, ApprovalDecision.DENY, message="No one is at a terminal to answer."
        )
        return
    answers: dict[str, str] = {}
    for question in event.questions:
        if interactive:
            from rich.prompt import Prompt

            from ._common import err_console

            answers[question.question] = await asyncio.to_thread(
                Prompt.ask,
                question.question,
                choices=list(question.options) or None,
                console=err_console,
            )
        else:
            answers[question.question] = question.options[0] if question.options else "yes"
    await adapter.answer_question(event.request_id, answers)
