"""Qwen Code driven through QwenAdapter (stream-json, Claude-compatible) on the pinned CLI.

Same conformance scenarios as Claude Code; what Qwen Code 0.15.10 cannot do in stream-json mode is
declared unsupported (and its ``cap_*`` is False), and that is checked here too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import _stream_json_cases as cases
import pytest
from _stream_json_cases import Env

from corral.adapters.qwen import QwenAdapter
from corral.errors import UnsupportedOperation
from corral.events import QuestionAsked
from corral.testing import FakeModelServer
from corral.testing._record_targets import record
from corral.testing.conformance import SCENARIOS, LiveSession, Outcome
from corral.testing.conformance import run_scenario as run_conformance_scenario
from corral.testing.conformance._targets import SPECS, build_target

AGENT = "qwen"
pytestmark = [pytest.mark.realcli(AGENT), pytest.mark.timeout(300)]


@pytest.fixture
def env(agent_bin: Callable[[str], Path], isolated_home: Path, git_repo: Path) -> Iterator[Env]:
    binary = agent_bin(AGENT)
    with FakeModelServer() as server:
        yield Env(AGENT, QwenAdapter, binary, server, isolated_home, git_repo)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_conformance(scenario: str, agent_bin: Callable[[str], Path]) -> None:
    agent_bin(AGENT)
    target = build_target(SPECS[AGENT])
    async with FakeModelServer() as server:
        result = await run_conformance_scenario(target, SCENARIOS[scenario], server)
    if result.declared is False:
        assert result.outcome is Outcome.UNSUPPORTED, result
    else:
        assert result.outcome is Outcome.PASS, result.reason


def test_what_qwen_cannot_do_is_declared() -> None:
    caps = QwenAdapter.capabilities()
    assert not caps.interact  # ask_user_question gets no answers over stream-json
    assert not caps.documents and not caps.subagents
    assert caps.thinking


async def test_question_answer_is_unsupported_and_says_why(env: Env) -> None:
    """The CLI does ask (can_use_tool for ask_user_question), but cannot receive answers."""
    env.server.set_scenario(
        {
            "steps": [
                {
                    "match": {"last_is_tool_result": False},
                    "reply": {
                        "tool_calls": [
                            {
                                "name": "ask_user_question",
                                "arguments": {
                                    "questions": [
                                        {
                                            "question": "Which color?",
                                            "header": "Color",
                                            "options": [
                                                {"label": "red", "description": "red"},
                                                {"label": "blue", "description": "blue"},
                                            ],
                                        }
                                    ]
                                },
                            }
                        ]
                    },
                },
                {"match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
            ]
        }
    )
    adapter = env.adapter()
    d = LiveSession(adapter)
    await d.start()
    try:
        await d.prompt("Ask me a color.")
        asked = await d.until(lambda e: isinstance(e, QuestionAsked), timeout=60, what="question")
        assert isinstance(asked, QuestionAsked)
        assert asked.questions[0].options == ("red", "blue")
        with pytest.raises(UnsupportedOperation) as info:
            await adapter.answer_question(asked.request_id, {"Which color?": "blue"})
        assert info.value.operation == "answer_question"
        from corral.events import ApprovalDecision

        await adapter.respond_approval(asked.request_id, ApprovalDecision.DENY)
        await d.turn()
    finally:
        await d.finish()


async def test_thinking_is_streamed(env: Env) -> None:
    await cases.case_thinking(env)


async def test_allow_always_remembers_for_the_session(env: Env) -> None:
    await cases.case_allow_always(env)


async def test_runtime_set_model_and_permission_mode(env: Env) -> None:
    await cases.case_set_model_and_mode(env)


async def test_recorder_writes_a_replayable_transcript(
    tmp_path: Path, agent_bin: Callable[[str], Path]
) -> None:
    binary = agent_bin(AGENT)
    path = await record("qwen", "text", tmp_path, binary=str(binary))
    assert path == tmp_path / "qwen" / "0.15.10" / "text.jsonl"
    meta = json.loads(path.with_suffix(".meta.json").read_text())
    assert meta["argv"][0][-2:] == ["--auth-type", "openai"]
    assert meta["script"] == SCENARIOS["text"].script
