"""Record OpenCode-server and Pi-RPC traffic from the real CLIs as parser fixtures.

    corral record opencode text --out tests/fixtures/transcripts     # or: all
    corral record pi all --out tests/fixtures/transcripts

Each scenario runs the driver (with its tap on) against the scripted model server, an isolated
HOME and a fresh git repository, and writes ``tests/fixtures/transcripts/<cli>/<version>/
<scenario>.jsonl`` plus ``.meta.json`` (CLI, version, scenario and its model script, argv, date).
Scenario names differ from the conformance scenarios that ``corral record`` records, so the two
never overwrite each other's files. The line format is the one ``corral record`` uses::

    {"dir": "in",  "line": {...}}   pi: a command we wrote · opencode: one HTTP exchange we made
                                    ({"method", "path", "body", "status", "response"})
    {"dir": "out", "line": {...}}   pi: a stdout object · opencode: one /event SSE data object
    {"dir": "exit", "code": N}      the CLI (pi) or the server (opencode serve) exited
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import agents
from .._version import __version__
from ..adapters.base import Attachment, BaseAdapter
from ..errors import ConfigError
from ..events import ApprovalRequested, Event, QuestionAsked, SessionEnded, TextDelta, TurnCompleted
from ..redirect import redirect_for
from ..registry import Registry
from . import _transcript as transcript
from ._transcript import Tape
from .conformance._scenarios import PNG_1PX
from .fake_model import FakeModelServer

DEFAULT_OUT = Path("tests/fixtures/transcripts")
"""Relative to the current directory: run from the repository root to update its fixtures."""
MODEL = "fake-model"


Drive = Callable[[BaseAdapter], Awaitable[None]]


async def _turn(
    adapter: BaseAdapter, events: Any, *, on: Callable[[Event], Awaitable[None]] | None = None
) -> None:
    async for event in events:
        if on is not None:
            await on(event)
        if isinstance(event, ApprovalRequested) and on is None:
            raise RuntimeError("unexpected approval request")
        if isinstance(event, TurnCompleted | SessionEnded):
            return


def _simple(prompt: str, attachments: list[Attachment] | None = None) -> Drive:
    async def drive(adapter: BaseAdapter) -> None:
        events = adapter.stream()
        await adapter.send(prompt, attachments)
        await _turn(adapter, events)

    return drive


def _approve(decision: str) -> Drive:
    from ..events import ApprovalDecision

    async def drive(adapter: BaseAdapter) -> None:
        async def on(event: Event) -> None:
            if isinstance(event, ApprovalRequested):
                await adapter.respond_approval(event.request_id, ApprovalDecision(decision))

        events = adapter.stream()
        await adapter.send("Run the command.")
        await _turn(adapter, events, on=on)

    return drive


async def _question(adapter: BaseAdapter) -> None:
    async def on(event: Event) -> None:
        if isinstance(event, QuestionAsked):
            await adapter.answer_question(
                event.request_id, {q.question: "blue" for q in event.questions}
            )

    events = adapter.stream()
    await adapter.send("Ask me which colour I prefer.")
    await _turn(adapter, events, on=on)


async def _cancel(adapter: BaseAdapter) -> None:
    events = adapter.stream()
    await adapter.send("Tell me a long story.")
    async for event in events:
        if isinstance(event, TextDelta):
            break
    await adapter.interrupt()
    await _turn(adapter, events)


async def _during(adapter: BaseAdapter) -> None:
    events = adapter.stream()
    await adapter.send("Tell me a long story.")
    async for event in events:
        if isinstance(event, TextDelta):
            break
    await adapter.send("SECOND PROMPT: also say goodbye.")
    await _turn(adapter, events)


async def _fail_then_compact(adapter: BaseAdapter) -> None:
    events = adapter.stream()
    await adapter.send("Say hello.")
    await _turn(adapter, events)
    # pi schedules its own retry after the failed run; a compaction cancels it.
    await adapter.compact()  # type: ignore[attr-defined]


_SLOW = {"text": "Once upon a time " * 20, "chunks": 20, "chunk_delay": 0.2}


def _tool(capability: str | None = None, **spec: Any) -> dict[str, Any]:
    call = {"capability": capability, **spec} if capability else spec
    return {"match": {"last_is_tool_result": False}, "times": 1, "reply": {"tool_calls": [call]}}


def _script(*steps: dict[str, Any], default: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "steps": list(steps),
        "default": default or {"text": "Hello from the scripted model.", "chunks": 3},
    }


@dataclass(frozen=True)
class RecScenario:
    description: str
    script: dict[str, Any]
    drive: Drive
    init: dict[str, Any] = field(default_factory=dict)
    agents: tuple[str, ...] = ("opencode", "pi")


SCENARIOS: dict[str, RecScenario] = {
    "text": RecScenario("a streamed text answer", _script(), _simple("Say hello.")),
    "tool-write": RecScenario(
        "a write tool call with its result",
        _script(_tool("write_file", path="hello.txt", content="hi")),
        _simple("Create hello.txt containing hi."),
    ),
    "shell-output": RecScenario(
        "a shell command with output",
        _script(_tool("shell", command="printf 'one\\ntwo\\n'")),
        _simple("Run a command."),
    ),
    "tool-error": RecScenario(
        "a read of a missing file fails",
        _script(_tool("read", path="missing.txt")),
        _simple("Read missing.txt."),
    ),
    "approval-allow": RecScenario(
        "a permission request answered once",
        _script(_tool("shell", command="printf ok > approved.txt")),
        _approve("allow"),
        {"permission_mode": "ask"},
        ("opencode",),
    ),
    "approval-deny": RecScenario(
        "a permission request rejected",
        _script(_tool("shell", command="printf no > denied.txt")),
        _approve("deny"),
        {"permission_mode": "ask"},
        ("opencode",),
    ),
    "question": RecScenario(
        "the question tool, answered",
        _script(_tool("ask_user", question="Which colour do you prefer?", options=["red", "blue"])),
        _question,
        agents=("opencode",),
    ),
    "todo": RecScenario(
        "a todo list written by the agent",
        _script(
            _tool(
                name="todowrite",
                arguments={
                    "todos": [
                        {"content": "Write the code", "status": "in_progress", "priority": "high"},
                        {"content": "Test it", "status": "pending", "priority": "medium"},
                    ]
                },
            )
        ),
        _simple("Plan the work."),
        agents=("opencode",),
    ),
    "subagent": RecScenario(
        "a task tool call whose child session answers",
        _script(
            _tool(
                name="task",
                arguments={
                    "description": "Say hello",
                    "prompt": "Say hello.",
                    "subagent_type": "general",
                },
            )
        ),
        _simple("Delegate a greeting."),
        agents=("opencode",),
    ),
    "thinking": RecScenario(
        "reasoning then text",
        _script(default={"thinking": "Let me think about it.", "text": "Hello.", "chunks": 2}),
        _simple("Think, then say hello."),
    ),
    "cancel-mid-turn": RecScenario(
        "a streaming turn interrupted",
        _script({"match": {"turn": 1}, "times": 1, "reply": _SLOW}),
        _cancel,
    ),
    "input-during-turn": RecScenario(
        "a second prompt sent while the first streams",
        _script({"match": {"turn": 1}, "times": 1, "reply": {**_SLOW, "chunks": 12}}),
        _during,
    ),
    "image-input": RecScenario(
        "a prompt with an image attachment",
        _script(),
        _simple(
            "What is in this image?",
            [Attachment(data=PNG_1PX, media_type="image/png", name="pixel.png")],
        ),
    ),
    "error-429": RecScenario(
        "the first request is rate-limited (429, retry after 1 s), the retry answers",
        _script(
            {
                "match": {"turn": 1},
                "times": 1,
                "reply": {"error": {"kind": "rate_limit", "retry_after": 1}},
            }
        ),
        _simple("Say hello."),
    ),
    "retry-compact": RecScenario(
        "every request fails (500); pi's scheduled retry is cancelled by a manual compaction",
        _script(default={"error": {"kind": "server", "message": "scripted outage"}}),
        _fail_then_compact,
        agents=("pi",),
    ),
    "error-400": RecScenario(
        "the provider rejects the request (400)",
        _script(default={"error": {"kind": "bad_request", "message": "scripted failure"}}),
        _simple("Say hello."),
    ),
}


def _adapter_class(cli: str) -> type[BaseAdapter]:
    if cli not in ("opencode", "pi"):
        raise ConfigError(f"unknown cli {cli!r} (opencode or pi)")
    return Registry().resolve(cli)


def _argv_of(adapter: Any) -> list[str]:
    """The command line the driver started (the OpenCode server's, or pi's)."""
    server = getattr(adapter, "server", None)
    if server is not None:
        return list(server.argv)
    transport = getattr(adapter, "transport", None)
    return list(transport.argv) if transport is not None else []


def _git_repo(path: Path) -> None:
    path.mkdir()
    (path / "README.md").write_text("# scratch repository for a recording\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "corral", "GIT_AUTHOR_EMAIL": "corral@localhost"}
    env |= {"GIT_COMMITTER_NAME": "corral", "GIT_COMMITTER_EMAIL": "corral@localhost"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)


def cli_version(binary: str) -> str:
    from ..adapters.base import parse_version

    out = subprocess.run(
        [binary, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    return parse_version(out.stdout + out.stderr) or "unknown"


async def record(cli: str, name: str, out: Path = DEFAULT_OUT) -> Path:
    scenario = SCENARIOS[name]
    binary = agents.locate(cli)
    if binary is None:
        raise ConfigError(f"{cli} is not installed (corral agents install {cli})")
    version = cli_version(str(binary))
    rec = Tape()
    tmp = Path(tempfile.mkdtemp(prefix=f"corral-record-{cli}-"))
    try:
        home, repo = tmp / "home", tmp / "repo"
        _git_repo(repo)
        async with FakeModelServer({"name": name, **scenario.script}) as server:
            red = redirect_for(
                cli, base_url=server.base_url, model=MODEL, api_key="test", home=home
            )
            red.apply()
            base_env = {
                k: os.environ[k] for k in ("PATH", "LANG", "TZ", "TMPDIR") if k in os.environ
            }
            cls: Any = _adapter_class(cli)
            adapter = cls(
                cwd=str(repo),
                model=MODEL,
                binary=str(binary),
                env=dict(red.env),
                extra_args=list(red.argv),
                tap=rec.tap,
                base_env=base_env,
                **scenario.init,
            )
            await adapter.start("record")
            argv = list(_argv_of(adapter))
            try:
                await asyncio.wait_for(scenario.drive(adapter), 120)
            finally:
                await adapter.stop()
            requests = len(server.requests)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    meta = {
        "cli": cli,
        "version": version,
        "adapter": _adapter_class(cli).agent_id,
        "scenario": name,
        "description": scenario.description,
        "model_scenario": scenario.script,
        "init": scenario.init,
        "argv": argv,
        "argv_extra": list(red.argv),
        "model_requests": requests,
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "corral_version": __version__,
        "command": f"corral record {cli} {name} --out {out}",
    }
    scrub = {str(tmp): "/tmp/corral-record"}
    return transcript.write(out, cli, version, name, rec.entries(), meta, scrub=scrub)


def scenario_names(cli: str, wanted: str) -> list[str]:
    """The recorder scenarios of ``cli`` named ``wanted`` (``all``: every one); [] when none."""
    names = list(SCENARIOS) if wanted == "all" else [wanted]
    return [n for n in names if n in SCENARIOS and cli in SCENARIOS[n].agents]
