"""Exit status is carried wherever a vendor payload has it (issue 11): the ACP parser reads
``exit`` / ``exitCode`` / ``exit_code`` from ``rawOutput`` or its ``metadata`` (OpenCode's shape;
the real-CLI check is tests/realcli/test_exit_status.py)."""

from __future__ import annotations

from typing import Any

import pytest

from corral.events import ToolCallCompleted, ToolCallFailed
from corral.protocols.acp import AcpParser


def finish(status: str, raw_output: Any) -> ToolCallCompleted | ToolCallFailed:
    parser = AcpParser()
    parser.update(
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "bash", "kind": "execute"}
    )
    events = parser.update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "status": status,
            "rawOutput": raw_output,
        }
    )
    (end,) = [e for e in events if isinstance(e, ToolCallCompleted | ToolCallFailed)]
    return end


@pytest.mark.parametrize(
    ("raw_output", "code"),
    [
        ({"output": "nope\n", "metadata": {"output": "nope\n", "exit": 3}}, 3),
        ({"exitCode": 2}, 2),
        ({"exit_code": 0}, 0),
        ({"output": "x"}, None),
        ({"metadata": {"exit": True}}, None),  # a bool is not an exit code
        ("plain text", None),
    ],
)
def test_exit_codes_are_carried(raw_output: Any, code: int | None) -> None:
    end = finish("completed", raw_output)
    assert isinstance(end, ToolCallCompleted)
    assert end.result.exit_code == code
    assert end.result.is_error is bool(code)


def test_a_failed_call_keeps_its_exit_code_too() -> None:
    end = finish("failed", {"metadata": {"exit": 127}})
    assert isinstance(end, ToolCallFailed)
    assert end.result is not None and end.result.exit_code == 127
