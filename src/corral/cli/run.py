"""``corral run AGENT PROMPT``: one prompt, its events streamed, the outcome as the exit code.

Exit codes: 0 the turn ended normally · 1 it failed, the agent died, or it stayed silent past
``--idle-timeout`` (an ``agent_unresponsive`` error, then the turn is stopped) · 2 bad usage or an
invalid (e.g. empty) prompt · 4 unknown agent · 5 the agent cannot enforce ``--intent`` · 130
cancelled (Ctrl-C interrupts the turn; a second Ctrl-C kills the agent) · 143 / 129 terminated by
SIGTERM / SIGHUP (the agent is killed first: its whole process group, never left running).

Approvals: under ``--intent`` corral first checks every request against the intent and denies what
it forbids, whatever else was asked for (``--yes`` included); a run has no human at a prompt, so
what the intent grants is allowed and everything else denied. Without an intent, ``--yes`` allows
everything; otherwise a terminal is asked, and without a terminal every request is denied (a
question gets no answer and is denied too).
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..adapters._turns import DEFAULT_IDLE_TIMEOUT
from ._common import JSON_OPTION
from ._intent import VENDOR_MODE_HELP, allowed_commands_option, intent_option
from ._run_main import adapter_class, load_images, run_command, run_once

__all__ = ["adapter_class", "load_images", "register", "run_once"]

_CWD_OPTION = typer.Option(None, "--cwd", help="Working directory (default: here).")
_IMAGE_OPTION = typer.Option([], "--image", help="Attach an image file (repeatable).")


def register(root: typer.Typer) -> None:
    @root.command("run")
    def run(
        agent: str = typer.Argument(
            ..., help="Adapter id (claude-code, qwen, codex, gemini, opencode, pi, hermes, …)."
        ),
        prompt: str = typer.Argument(..., help="The prompt to send."),
        model: str | None = typer.Option(None, "--model", "-m", help="Model name for the agent."),
        cwd: Path | None = _CWD_OPTION,
        resume: str | None = typer.Option(None, "--resume", help="Continue this agent session id."),
        image: list[Path] = _IMAGE_OPTION,
        effort: str | None = typer.Option(
            None, "--effort", help="Reasoning effort, where supported."
        ),
        intent: str | None = intent_option(),
        allowed_commands: str | None = allowed_commands_option(),
        vendor_permission_mode: str | None = typer.Option(
            None, "--vendor-permission-mode", help=VENDOR_MODE_HELP
        ),
        yes: bool = typer.Option(
            False,
            "--yes",
            "-y",
            help="Allow every approval request (under --intent: every one the intent grants).",
        ),
        binary: str | None = typer.Option(
            None, "--binary", hidden=True, help="Agent executable to run."
        ),
        agent_arg: list[str] = typer.Option(
            [], "--agent-arg", help="Extra argument for the agent CLI (repeatable)."
        ),
        idle_timeout: float = typer.Option(
            DEFAULT_IDLE_TIMEOUT,
            "--idle-timeout",
            help="Stop the turn after this many seconds without output from the agent (0: never).",
        ),
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Send one prompt to an agent and stream its normalized events."""
        code = run_command(
            agent,
            prompt,
            model=model,
            cwd=cwd,
            resume=resume,
            image=image,
            effort=effort,
            intent=intent,
            allowed_commands=allowed_commands,
            vendor_permission_mode=vendor_permission_mode,
            yes=yes,
            binary=binary,
            agent_arg=agent_arg,
            idle_timeout=idle_timeout,
            json_out=json_out,
        )
        raise typer.Exit(code)
