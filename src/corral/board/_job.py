"""The seed-002 ``run`` contract as data: the job's environment in, its structured result out.

Pure: :func:`job_env` reads a mapping (``os.environ`` in the CLI) and refuses a bad value by naming
the variable; :func:`parse_markers` reads the agent's final text. The runner lives in
``corral.cli.job``.

Environment: ``AGENT_PROMPT`` (required), ``AGENT_MODE`` (``work`` / ``act-pr`` / ``review``,
required), ``AGENT_COMMANDS`` (comma-separated plain command prefixes), ``AGENT_MODEL`` (optional,
passed through untranslated; an empty value counts as unset, so the vendor never gets an empty
model), ``AGENT_CWD`` (default: the current directory), and the ``BOARD_AGENT_ID`` /
``BOARD_TASK`` / ``BOARD_PORT`` passthrough forwarded with every board event.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from ..errors import ConfigError

JobMode = Literal["work", "act-pr", "review"]
MODES: tuple[JobMode, ...] = ("work", "act-pr", "review")

EXIT_COMPLETED = 0
EXIT_AGENT_FAILED = 1
EXIT_BAD_ENV = 2
EXIT_UNKNOWN_AGENT = 4
EXIT_INTENT_REFUSED = 5
EXIT_TIMEOUT = 124
EXIT_INTERRUPTED = 130
"""The documented exit codes of ``corral job run`` (seed 002: 0 = completed, anything else = failed)."""


@dataclass(frozen=True)
class JobEnv:
    prompt: str
    mode: JobMode
    commands: tuple[str, ...]
    model: str | None
    cwd: Path
    board_agent: str | None
    board_task: str | None
    board_port: int | None


def _mode(raw: str | None) -> JobMode:
    for mode in MODES:
        if raw == mode:
            return mode
    raise ConfigError(
        f"AGENT_MODE must be one of {', '.join(MODES)} (got {raw!r})"
        if raw
        else f"AGENT_MODE is required ({', '.join(MODES)})"
    )


def job_env(env: Mapping[str, str], *, default_cwd: Path) -> JobEnv:
    """The job described by ``env``; a missing or bad variable is a :class:`ConfigError`."""
    prompt = env.get("AGENT_PROMPT", "")
    if not prompt.strip():
        raise ConfigError("AGENT_PROMPT is required and must not be empty")
    mode = _mode(env.get("AGENT_MODE"))
    commands = tuple(c.strip() for c in env.get("AGENT_COMMANDS", "").split(",") if c.strip())
    model = env.get("AGENT_MODEL") or None
    cwd = Path(env.get("AGENT_CWD") or default_cwd)
    if not cwd.is_dir():
        raise ConfigError(f"AGENT_CWD is not a directory: {cwd}")
    port_raw = env.get("BOARD_PORT") or None
    port = None
    if port_raw is not None:
        if not port_raw.isdigit() or not 0 < int(port_raw) < 65536:
            raise ConfigError(f"BOARD_PORT must be a TCP port number (got {port_raw!r})")
        port = int(port_raw)
    return JobEnv(
        prompt=prompt,
        mode=mode,
        commands=commands,
        model=model,
        cwd=cwd.resolve(),
        board_agent=env.get("BOARD_AGENT_ID") or None,
        board_task=env.get("BOARD_TASK") or None,
        board_port=port,
    )


class Markers(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The marker lines of the agent's final text; the last of each kind wins."""

    not_ready: str | None = None
    """``NOT READY: <reason>``: the agent stopped because the task is not ready."""
    relevance_review: str | None = None
    """``RELEVANCE REVIEW: <Still relevant | Partly done | Already done | Needs rewrite>``."""
    pr_review: str | None = None
    """``PR REVIEW: <APPROVE | REQUEST CHANGES>`` — the verdict alone, when it is one of the two."""
    pr_review_line: str | None = None
    """The whole text after ``PR REVIEW:``."""
    addressed: str | None = None
    """``ADDRESSED: <one line on what changed>``."""
    report: str | None = None
    """The final text from the last marker line on: the report the board files."""


_MARKER = re.compile(r"^[ \t]*(NOT READY|RELEVANCE REVIEW|PR REVIEW|ADDRESSED):[ \t]*(.*)$", re.M)
_VERDICT = re.compile(r"^(APPROVE|REQUEST CHANGES)\b")
_FIELDS = {
    "NOT READY": "not_ready",
    "RELEVANCE REVIEW": "relevance_review",
    "PR REVIEW": "pr_review_line",
    "ADDRESSED": "addressed",
}


def parse_markers(text: str) -> Markers:
    found: dict[str, str] = {}
    last = None
    for match in _MARKER.finditer(text):
        found[_FIELDS[match.group(1)]] = match.group(2).strip()
        last = match
    if last is None:
        return Markers()
    verdict = _VERDICT.match(found.get("pr_review_line", ""))
    return Markers(
        not_ready=found.get("not_ready"),
        relevance_review=found.get("relevance_review"),
        pr_review=verdict.group(1) if verdict else None,
        pr_review_line=found.get("pr_review_line"),
        addressed=found.get("addressed"),
        report=text[last.start() :].strip(),
    )


class JobResult(msgspec.Struct, frozen=True, kw_only=True):
    """What ``corral job run --json`` prints."""

    status: Literal["completed", "failed", "timeout", "refused", "interrupted"]
    exit_code: int
    agent: str
    mode: JobMode
    intent_enforced: bool
    """Whether AGENT_MODE reached the launch as an intent (see ``corral.cli.job.launch_intent``)."""
    session_id: str
    final_text: str
    markers: Markers
    model: str | None = None
    error: str | None = None
    board_events: int = 0
    board_dropped: int = 0
