"""The fast storable checks give the verdict of the slow ones.

``fields_ok`` checks a struct field (a ``ToolResult``, a tuple of ``PlanEntry``…) field by field
when it holds exactly its declared types, and otherwise encodes the event and decodes it as its
type; it skips encoding a ``raw`` that is (a part of) the line the decoder just read. Each case
here is compared with the slow answer.
"""

from __future__ import annotations

from typing import Any

import pytest

from corral._process._decode import loads
from corral.events import (
    ApprovalDecision,
    ApprovalOption,
    ApprovalRequested,
    Event,
    PlanEntry,
    PlanUpdated,
    ToolCallCompleted,
    ToolCallFailed,
    ToolResult,
    Usage,
)
from corral.events._fields import _Clean, _roundtrip, fields_ok, mark_part, value_ok

_OPTION = ApprovalOption(id="a", label="Allow", decision=ApprovalDecision.ALLOW)


def _cases() -> list[Any]:
    return [
        ToolCallCompleted(call_id="c", result=ToolResult(output="ok", exit_code=0)),
        ToolCallCompleted(call_id="c", result=ToolResult(output="ok", structured={"a": [1]})),
        ToolCallCompleted(call_id="c", result=ToolResult(output="x\ud800")),  # lone surrogate
        ToolCallCompleted(call_id="c", result=ToolResult(exit_code="3")),  # type: ignore[arg-type]
        ToolCallCompleted(call_id="c", result=ToolResult(exit_code=2**70)),
        ToolCallCompleted(call_id="c", result=ToolResult(is_error=1)),  # type: ignore[arg-type]
        ToolCallCompleted(call_id="c", result={"output": "a dict"}),  # type: ignore[arg-type]
        ToolCallFailed(call_id="c", error="e"),
        ToolCallFailed(call_id="c", error="e", result=ToolResult(output="o")),
        ToolCallFailed(call_id="c", error="e", result="not one"),  # type: ignore[arg-type]
        PlanUpdated(entries=(PlanEntry(content="a"), PlanEntry(content="b", status="completed"))),
        PlanUpdated(entries=[PlanEntry(content="a list")]),  # type: ignore[arg-type]
        PlanUpdated(entries=(PlanEntry(content=3),)),  # type: ignore[arg-type]
        PlanUpdated(entries=(PlanEntry(content="a", priority="\udc00"),)),
        PlanUpdated(entries=("just text",)),  # type: ignore[arg-type]
        ApprovalRequested(request_id="r", tool_name="t", options=(_OPTION,)),
        ApprovalRequested(request_id="r", tool_name="t", options=({"id": "a"},)),  # type: ignore[arg-type]
        ApprovalRequested(
            request_id="r",
            tool_name="t",
            options=(ApprovalOption(id="a", label="A", decision="allow"),),  # type: ignore[arg-type]
        ),
        ApprovalRequested(
            request_id="r",
            tool_name="t",
            options=(ApprovalOption(id="a", label="A", decision="maybe"),),  # type: ignore[arg-type]
        ),
    ]


@pytest.mark.parametrize("event", _cases(), ids=lambda e: type(e).__name__)
def test_struct_fields_get_the_round_trip_verdict(event: Event) -> None:
    assert fields_ok(event) is _roundtrip(event)


def test_a_part_of_the_clean_line_is_not_encoded_again() -> None:
    line = loads(b'{"method": "m", "params": {"update": {"k": "v"}}, "n": 2}')
    params, update = line["params"], line["params"]["update"]
    mark_part(update, "params", "update")
    assert _Clean.part is update
    assert fields_ok(Usage(raw=update))
    mark_part(params, "params")
    assert _Clean.part is params


def test_only_the_named_part_counts() -> None:
    line = loads(b'{"params": {"a": 1}, "result": 123456789012345678901234567890}')
    before = _Clean.part
    mark_part({"a": 1}, "params")  # equal, but not the line's own object
    mark_part(line["result"], "result")  # a bare integer keeps its range check
    assert _Clean.part is before
    big = Usage(raw=line["result"])
    assert fields_ok(big) is value_ok(line["result"]) is False
