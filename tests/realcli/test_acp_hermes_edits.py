"""Hermes asks over ACP before it edits a file (it does not ask for harmless shell commands, so
the suite's approval scenarios do not apply): allow writes the file, deny leaves it unwritten and
the call is reported denied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _acp_conformance import require

from corral.events import ApprovalDecision, ApprovalRequested, Event, ToolCallFailed, ToolKind
from corral.testing import FakeModelServer
from corral.testing.conformance._context import Context
from corral.testing.conformance._runner import make_workspace
from corral.testing.conformance._scenarios import SCENARIOS
from corral.testing.conformance._targets import SPECS, build_target


@pytest.fixture(scope="module")
def acp_server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.mark.realcli("hermes")
@pytest.mark.timeout(180)
@pytest.mark.parametrize("decision", [ApprovalDecision.ALLOW, ApprovalDecision.DENY])
async def test_edit_approval(
    acp_server: FakeModelServer, tmp_path: Path, decision: ApprovalDecision
) -> None:
    require("hermes")
    target = build_target(SPECS["hermes"])
    acp_server.set_scenario({"name": "hermes-edit", **SCENARIOS["tool-write"].script})
    ctx = Context(target=target, server=acp_server, workspace=make_workspace(tmp_path), timeout=60)
    asked: list[ApprovalRequested] = []

    async with ctx.session() as s:

        async def answer(event: Event) -> None:
            if isinstance(event, ApprovalRequested):
                asked.append(event)
                await s.adapter.respond_approval(event.request_id, decision)

        await s.send("Create hello.txt containing hi.")
        turn = await s.turn(60, on_event=answer)

    assert len(asked) == 1 and asked[0].kind is ToolKind.EDIT
    assert asked[0].file and asked[0].file.endswith("hello.txt")
    written = (ctx.workspace.repo / "hello.txt").exists()
    if decision is ApprovalDecision.ALLOW:
        assert written
    else:
        assert not written
        assert any(f.denied for f in turn.of(ToolCallFailed)), turn.describe()
