"""Every vendor store reader, on the store its real CLI wrote (``corral record AGENT store``).

The recording is two headless turns in one session: turn 1 asks for hello.txt, the model calls
the CLI's write tool (or shell), then says ``DONE``; turn 2 continues the session with a plain
question. Each reader must list that one session with its id, cwd and first prompt, find it as
the head of its directory, and parse the transcript into the same event story.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.adapters._stores import scan, store_for
from corral.events import (
    StatusChanged,
    TextComplete,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolKind,
    TurnCompleted,
)
from corral.registry import Registry

from ._recorded import Recorded, parse_all, recorded

CLIS = ["claude", "codex", "gemini", "qwen", "pi", "opencode", "hermes"]
FIXTURES_USED = [
    "claude/2.1.197/store",
    "codex/0.171.0/store",
    "gemini/0.61.0/store",
    "qwen/0.15.10/store",
    "pi/0.73.1/store",
    "opencode/1.18.33/store",
    "hermes/0.19.0/store",
]
SECOND = "Second answer from the scripted model."


@pytest.fixture(params=CLIS)
def rec(request: pytest.FixtureRequest, tmp_path: Path) -> Recorded:
    return recorded(request.param, tmp_path)


def _unquoted(rec: Recorded, text: str | None) -> str | None:
    """`opencode run` joins its arguments, quoting those with spaces: the prompt it stored."""
    if rec.agent == "opencode" and text is not None:
        return text.removeprefix('"').removesuffix('"')
    return text


def test_scan_lists_the_recorded_session_from_headers(rec: Recorded) -> None:
    found = scan(rec.module, rec.env)
    assert len(found) == 1
    entry = found[0]
    assert entry.agent_id == rec.agent
    assert entry.cwd == rec.cwd
    assert _unquoted(rec, entry.title) == rec.meta["prompts"][0]
    assert entry.problem is None
    assert Path(entry.path).is_file() and entry.size == Path(entry.path).stat().st_size
    assert rec.module.latest_sid_for_cwd(rec.cwd, rec.env) == entry.sid
    assert rec.module.transcript_path(rec.cwd, entry.sid, rec.env) == Path(entry.path)


def test_scan_since_skips_unchanged_files(rec: Recorded) -> None:
    (entry,) = scan(rec.module, rec.env)
    assert scan(rec.module, rec.env, since=entry.mtime) == []
    assert len(scan(rec.module, rec.env, since=entry.mtime - 1)) == 1


def test_other_directory_and_unknown_sid_resolve_to_nothing(rec: Recorded, tmp_path: Path) -> None:
    assert rec.module.latest_sid_for_cwd(str(tmp_path / "elsewhere"), rec.env) is None
    (entry,) = scan(rec.module, rec.env)
    # The right id from the wrong directory is not that session's transcript.
    assert rec.module.transcript_path(str(tmp_path / "elsewhere"), entry.sid, rec.env) is None
    assert rec.module.transcript_path(rec.cwd, "no-such-session", rec.env) is None
    assert rec.module.transcript_path(rec.cwd, "../escape", rec.env) is None


def test_an_empty_home_has_no_sessions(rec: Recorded, tmp_path: Path) -> None:
    empty = {k: v.replace(str(rec.home), str(tmp_path / "void")) for k, v in rec.env.items()}
    assert scan(rec.module, empty) == []
    assert rec.module.latest_sid_for_cwd(rec.cwd, empty) is None


def test_the_adapter_hooks_answer_from_the_store(rec: Recorded) -> None:
    cls = Registry().resolve(rec.agent)
    (entry,) = cls.scan_external_sessions(env=rec.env)
    assert entry.agent_id == cls.agent_id
    assert cls.latest_sid_for_cwd(rec.cwd, env=rec.env) == entry.sid


def test_transcript_parses_into_the_two_turns(rec: Recorded) -> None:
    (entry,) = scan(rec.module, rec.env)
    events = parse_all(rec.module, entry.path)
    prompts = [e.raw["text"] for e in events if isinstance(e, StatusChanged)]
    assert [_unquoted(rec, p) for p in prompts] == rec.meta["prompts"]
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert len(started) == 1
    call = started[0]
    assert call.kind in (ToolKind.EDIT, ToolKind.COMMAND)
    assert "hello.txt" in str(call.input)
    done = [e for e in events if isinstance(e, ToolCallCompleted | ToolCallFailed)]
    assert [e.call_id for e in done] == [call.call_id]
    assert isinstance(done[0], ToolCallCompleted)
    texts = [e.text for e in events if isinstance(e, TextComplete)]
    assert texts == ["DONE", SECOND]
    turns = [i for i, e in enumerate(events) if isinstance(e, TurnCompleted)]
    assert len(turns) == 2
    # Order: prompt 1 < tool call < its result < DONE < turn end < prompt 2 < answer < turn end.
    order = [type(e).__name__ for e in events]
    assert order.index("ToolCallStarted") < order.index("ToolCallCompleted")
    second_prompt = [i for i, e in enumerate(events) if isinstance(e, StatusChanged)][1]
    assert turns[0] < second_prompt < turns[1]


def test_every_recorded_adapter_has_a_store(rec: Recorded) -> None:
    assert store_for(rec.meta["adapter"]) is rec.module
    assert rec.meta["exit_codes"] == [0, 0]


def test_a_gemini_resume_stub_does_not_make_a_second_session(tmp_path: Path) -> None:
    """Gemini CLI 0.61 starts a new log (header and context only) on --resume in another minute
    and keeps writing the old one: one session, listed from the log that has the conversation.

    The stub is the recorded log's own first two lines under the next minute's name, which is
    what the CLI wrote when the recording's two turns straddled a minute."""
    rec = recorded("gemini", tmp_path)
    (entry,) = scan(rec.module, rec.env)
    main = Path(entry.path)
    for other in main.parent.iterdir():
        if other != main:
            other.unlink()
    head = b"".join(main.read_bytes().splitlines(keepends=True)[:2])
    stub = main.with_name(main.name.replace("session-", "session-9", 1))
    stub.write_bytes(head)
    later = entry.mtime + 60
    os.utime(stub, (later, later))
    per_file = list(rec.module.scan(rec.env))
    assert sorted(e.path for e in per_file) == sorted([str(main), str(stub)])
    assert {e.sid for e in per_file} == {entry.sid}
    (merged,) = scan(rec.module, rec.env)
    assert (merged.path, merged.title) == (str(main), entry.title)
    assert merged.mtime == later
    assert rec.module.transcript_path(rec.cwd, entry.sid, rec.env) == main
