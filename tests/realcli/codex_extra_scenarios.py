"""Codex file-change scenarios, beyond the shared conformance suite.

With the redirect's custom provider and an unknown model name, codex 0.171 advertises no
``apply_patch`` tool, so the suite's file writes go through the shell. A *model catalog*
(``-c model_catalog_json=PATH``) that declares ``fake-model`` with ``apply_patch_tool_type =
"freeform"`` makes codex offer ``apply_patch``; then file writes are ``fileChange`` items, and
with ``approvalPolicy: "untrusted"`` codex asks ``item/fileChange/requestApproval``.

Also ``command-output``: a slow command whose output codex streams as
``item/commandExecution/outputDelta``.

Used by tests/realcli/test_codex_file_change.py and scripts/record_codex.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from corral.adapters.base import BaseAdapter
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    Event,
    FileDiff,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallUpdated,
    ToolKind,
)
from corral.testing.conformance._context import Context
from corral.testing.conformance._scenarios import ConformanceScenario, _script, _tool_step
from corral.testing.conformance._session import LiveSession, expect
from corral.testing.conformance._types import Target

UNTRUSTED = ["-c", 'approval_policy="untrusted"']


def fake_model_entry(slug: str = "fake-model") -> dict[str, Any]:
    """The fewest ModelInfo fields codex 0.171 accepts (found by its parse errors, one by one)."""
    return {
        "slug": slug,
        "display_name": slug,
        "base_instructions": "You are a coding agent working in the user's repository.",
        "apply_patch_tool_type": "freeform",
        "shell_type": "shell_command",
        "visibility": "list",
        "supported_in_api": True,
        "priority": 1,
        "supported_reasoning_levels": [],
        "support_verbosity": False,
        "truncation_policy": {"mode": "tokens", "limit": 10000},
        "experimental_supported_tools": [],
    }


def write_catalog(path: Path) -> Path:
    path.write_text(json.dumps({"models": [fake_model_entry()]}))
    return path


def with_catalog(target: Target, catalog: Path) -> Target:
    """``target`` whose adapters also get ``-c model_catalog_json=CATALOG``."""
    make = target.make_adapter

    def make_adapter(**kwargs: Any) -> BaseAdapter:
        extra = [
            *kwargs.pop("extra_args", []),
            "-c",
            f"model_catalog_json={json.dumps(str(catalog))}",
        ]
        return make(extra_args=extra, **kwargs)

    return Target(
        agent=f"{target.agent}+apply_patch",
        adapter_class=target.adapter_class,
        make_adapter=make_adapter,
        unsupported={},
        turn_timeout=target.turn_timeout,
        extra=target.extra,
    )


async def _file_change(ctx: Context, decision: ApprovalDecision, filename: str) -> None:
    asked: list[ApprovalRequested] = []

    async def answer(s: LiveSession, event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            asked.append(event)
            await s.adapter.respond_approval(event.request_id, decision)

    async with ctx.session(extra_args=UNTRUSTED) as s:
        await s.send(f"Create {filename} containing hi.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: answer(s, e))
    expect(asked, "codex never asked to approve the file change")
    expect(asked[0].kind is ToolKind.EDIT, f"approval kind {asked[0].kind}, not edit")
    expect((asked[0].file or "").endswith(filename), f"approval names {asked[0].file!r}")
    written = (ctx.workspace.repo / filename).exists()
    if decision is ApprovalDecision.ALLOW:
        expect(written, f"approved edit did not write {filename}")
        done = [e for e in turn.of(ToolCallCompleted) if e.kind is ToolKind.EDIT]
        expect(done and done[0].call_id == asked[0].call_id, "the edit never completed")
        diffs = [d for d in turn.of(FileDiff) if d.path.endswith(filename)]
        expect(diffs and "+hi" in (diffs[0].diff or ""), "no diff adding 'hi'")
    else:
        expect(not written, f"denied edit wrote {filename} anyway")
        expect(any(f.denied for f in turn.of(ToolCallFailed)), "the edit was not reported denied")


async def file_change_allow(ctx: Context) -> None:
    await _file_change(ctx, ApprovalDecision.ALLOW, "allowed.txt")


async def file_change_deny(ctx: Context) -> None:
    await _file_change(ctx, ApprovalDecision.DENY, "refused.txt")


STREAMING_COMMAND = "for i in 1 2 3; do echo line$i; sleep 0.4; done"


async def command_output(ctx: Context) -> None:
    """A slow command's output streams as ``ToolCallUpdated`` deltas before it completes."""
    async with ctx.session() as s:
        await s.send("Count to three slowly in the shell.")
        turn = await s.turn(ctx.timeout)
    deltas = [u.output_delta for u in turn.of(ToolCallUpdated) if u.output_delta]
    expect(deltas, "no output delta streamed")
    done = turn.of(ToolCallCompleted)
    expect(done and done[0].result.output == "line1\nline2\nline3\n", "wrong final output")
    t_delta, t_done = turn.time_of(ToolCallUpdated), turn.time_of(ToolCallCompleted)
    expect(t_delta is not None and t_done is not None and t_delta < t_done, "deltas came late")


COMMAND_OUTPUT = ConformanceScenario(
    "command-output",
    "a slow command's output streams",
    command_output,
    _script(_tool_step("shell", command=STREAMING_COMMAND)),
)

FILE_CHANGE_SCENARIOS = {
    s.name: s
    for s in [
        ConformanceScenario(
            "file-change-allow",
            "an apply_patch edit approved",
            file_change_allow,
            _script(_tool_step("write_file", path="allowed.txt", content="hi")),
            "permissions",
        ),
        ConformanceScenario(
            "file-change-deny",
            "an apply_patch edit refused",
            file_change_deny,
            _script(_tool_step("write_file", path="refused.txt", content="hi")),
            "permissions",
        ),
    ]
}
