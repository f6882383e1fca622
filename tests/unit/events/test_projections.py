from corral.events import (
    AgentInfo,
    ApprovalDecision,
    ApprovalOption,
    ApprovalRequested,
    EndReason,
    ErrorEvent,
    FileDiff,
    PlanEntry,
    PlanUpdated,
    ReasoningDelta,
    SessionEnded,
    SessionStarted,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolKind,
    ToolResult,
    TurnCompleted,
    Usage,
)
from corral.events.blocks import (
    AgentInfoBlock,
    BlockProjector,
    DiffBlock,
    PermissionBlock,
    PlanBlock,
    SessionEndBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    UsageBlock,
)
from corral.events.board import BoardProjector, board_kind

AGENT = AgentInfo(agent_id="claude-code", name="Claude Code")


def _board(events: list, **kw) -> list:  # type: ignore[type-arg]
    proj = BoardProjector(**kw)
    return [b for ev in events if (b := proj.project_event("s1", ev)) is not None]


def test_board_tool_call_running_then_completed_with_same_kind() -> None:
    out = _board(
        [
            SessionStarted(agent=AGENT),
            TextDelta(text="ignored"),
            ToolCallStarted(call_id="c1", name="Bash", kind=ToolKind.COMMAND, cmd="pytest -q"),
            ToolCallCompleted(call_id="c1", result=ToolResult(output="3 passed", exit_code=0)),
            TurnCompleted(),
            SessionEnded(reason=EndReason.COMPLETED),
        ],
        agent="agent-7",
        task="T-1",
    )
    assert [(b.kind, b.running, b.ok) for b in out] == [
        ("session", None, None),
        ("test", True, None),
        ("test", None, True),
        ("idle", None, True),
        ("end", None, True),
    ]
    assert all(
        b.v == 1 and b.session == "s1" and b.agent == "agent-7" and b.task == "T-1" for b in out
    )
    assert out[1].cmd == "pytest -q" and out[2].detail == "3 passed"


def test_board_kinds_refine_commands() -> None:
    assert board_kind(ToolKind.COMMAND, "git commit -m x") == "git"
    assert board_kind(ToolKind.COMMAND, "ruff check .") == "check"
    assert board_kind(ToolKind.COMMAND, "ls") == "command"
    assert board_kind(ToolKind.EDIT, None) == "edit"
    assert board_kind(ToolKind.MCP, None) == "other"


def test_board_denied_call_and_failure() -> None:
    out = _board(
        [
            ToolCallStarted(call_id="c1", name="Write", kind=ToolKind.EDIT, file="a.py"),
            ToolCallFailed(call_id="c1", error="user said no", denied=True),
            TurnCompleted(stop_reason=StopReason.ERROR, error="boom"),
            ErrorEvent(message="fatal", fatal=True),
            PlanUpdated(
                entries=(PlanEntry(content="a", status="completed"), PlanEntry(content="b"))
            ),
        ]
    )
    assert out[1].kind == "edit" and out[1].ok is False and out[1].file == "a.py"
    assert out[1].detail == "denied: user said no"
    assert out[2].kind == "idle" and out[2].ok is False
    assert out[3].ok is False
    assert out[4].kind == "plan" and out[4].summary == "plan: 1/2 done"


def test_board_json_omits_absent_optionals() -> None:
    import msgspec

    (b,) = _board([SessionStarted(agent=AGENT)])
    assert msgspec.to_builtins(b) == {
        "v": 1,
        "session": "s1",
        "kind": "session",
        "summary": "Claude Code session started",
    }


def test_blocks_turn_is_closed_by_session_end_block_and_tools_pair() -> None:
    proj = BlockProjector()
    events = [
        SessionStarted(agent=AGENT),
        ReasoningDelta(text="hmm"),
        TextDelta(text="Wri", message_id="m1"),
        TextComplete(text="Writing", message_id="m1"),
        ToolCallStarted(call_id="c1", name="Write", kind=ToolKind.EDIT, input={"file_path": "x"}),
        FileDiff(path="x", diff="+hi"),
        ToolCallCompleted(call_id="c1", result=ToolResult(output="written")),
        Usage(input_tokens=10, output_tokens=3),
        TurnCompleted(stop_reason=StopReason.CANCELLED),
    ]
    blocks = [b for ev in events for b in proj.project(ev)]
    assert isinstance(blocks[0], AgentInfoBlock)
    assert blocks[1] == ThinkingBlock(text="hmm", done=False)
    assert blocks[2] == TextBlock(text="Wri", done=False, id="m1")
    assert blocks[3] == TextBlock(text="Writing", done=True, id="m1")
    assert blocks[4] == ToolCallBlock(
        id="c1", name="Write", status="running", kind=ToolKind.EDIT, input={"file_path": "x"}
    )
    assert blocks[5] == DiffBlock(path="x", diff="+hi")
    assert blocks[6] == ToolCallBlock(
        id="c1", name="Write", status="done", kind=ToolKind.EDIT, input={"file_path": "x"}
    )
    assert blocks[7] == ToolResultBlock(tool_call_id="c1", output="written")
    assert blocks[8] == UsageBlock(input_tokens=10, output_tokens=3)
    assert blocks[-1] == SessionEndBlock(reason="cancelled")


def test_blocks_failed_tool_permission_and_plan() -> None:
    proj = BlockProjector()
    opt = ApprovalOption(id="allow", label="Allow", decision=ApprovalDecision.ALLOW)
    out = proj.project(ApprovalRequested(request_id="r1", tool_name="Bash", options=(opt,)))
    assert out == [PermissionBlock(request_id="r1", tool_name="Bash", options=(opt,))]
    out = proj.project(ToolCallFailed(call_id="zz", error="denied", denied=True, name="Bash"))
    assert out[0].status == "error" and out[0].name == "Bash"
    assert out[1] == ToolResultBlock(tool_call_id="zz", output="denied", is_error=True)
    assert proj.project(PlanUpdated(entries=(PlanEntry(content="a"),))) == [
        PlanBlock(entries=(PlanEntry(content="a"),))
    ]
    assert proj.project(TurnCompleted(stop_reason=StopReason.ERROR, error="x")) == [
        SessionEndBlock(reason="failed", error="x")
    ]


def test_the_fast_path_lets_through_every_type_the_projector_matches() -> None:
    """``project_event`` returns early for types outside ``_PROJECTED``: a ``case`` added without
    its type there would never run."""
    import ast
    import inspect
    import textwrap

    from corral.events import board

    source = textwrap.dedent(inspect.getsource(board.BoardProjector.project_event))
    matched: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.MatchClass) and isinstance(node.cls, ast.Name):
            matched.add(node.cls.id)
    assert matched, "no class pattern found in project_event"
    assert matched == {t.__name__ for t in board._PROJECTED}
