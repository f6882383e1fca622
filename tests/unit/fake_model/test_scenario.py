from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from corral.errors import ConfigError
from corral.testing import Scenario, builtin_scenarios, load_scenario, scenario_json_schema
from corral.testing.fake_model import ParsedRequest, ToolInfo, find_cwd
from corral.testing.fake_model._plan import ScenarioRunner, json_for_schema, split_text
from corral.testing.fake_model._types import Message

WRITE = ToolInfo(
    name="Write",
    schema={
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
    },
)


def request(*messages: Message, tools: bool = True, system: str = "") -> ParsedRequest:
    return ParsedRequest(
        wire_api="anthropic", system=system, messages=list(messages), tools=[WRITE] if tools else []
    )


def user(text: str) -> Message:
    return Message(role="user", text=text)


def test_builtins_are_present_and_match_the_published_schema() -> None:
    assert builtin_scenarios() == [
        "error-429",
        "question",
        "shell",
        "slow-text",
        "split-emoji",
        "text",
        "write-file",
    ]
    schema = scenario_json_schema()
    folder = Path(__file__).parents[3] / "src/corral/testing/fake_model/scenarios"
    for name in builtin_scenarios():
        jsonschema.validate(yaml.safe_load((folder / f"{name}.yaml").read_text()), schema)
        assert load_scenario(name).name == name


def test_loading_errors_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_scenario("no-such-scenario")
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps: [{reply: {chunks: 0}}]\n")
    with pytest.raises(ConfigError):
        load_scenario(bad)
    good = tmp_path / "good.json"
    good.write_text('{"name": "j", "default": {"text": "x"}}')
    assert load_scenario(good).default.text == "x"


def test_matching_on_user_text_tool_result_and_times() -> None:
    runner = ScenarioRunner(
        Scenario.model_validate(
            {
                "steps": [
                    {
                        "name": "regex",
                        "match": {"user_text_regex": r"^deploy \d+$"},
                        "reply": {"text": "deploying"},
                    },
                    {
                        "name": "once",
                        "times": 1,
                        "match": {"user_text_contains": "hello"},
                        "reply": {"text": "hi!"},
                    },
                    {
                        "name": "ok",
                        "match": {"tool_result_contains": "exit 0"},
                        "reply": {"text": "good"},
                    },
                    {"name": "side", "match": {"kind": "side"}, "reply": {"text": "side answer"}},
                ]
            }
        )
    )
    assert runner.decide(request(user("deploy 42"))).plan.label == "regex"
    assert runner.decide(request(user("hello you"))).plan.text == "hi!"
    assert runner.decide(request(user("hello you"))).plan.label == "fallback:default"
    result = Message(role="tool", text="... exit 0", tool_call_id="t1")
    assert runner.decide(request(user("x"), result)).plan.label == "ok"
    other = Message(role="tool", text="exit 1", tool_call_id="t1")
    decision = runner.decide(request(user("x"), other))
    assert (decision.plan.label, decision.plan.text) == ("fallback:tool-result", "DONE")
    side = runner.decide(request(user("title"), tools=False))
    assert (side.plan.text, side.is_main, side.turn) == ("side answer", False, None)
    assert decision.turn == 5


def test_wire_api_and_model_match() -> None:
    runner = ScenarioRunner(
        Scenario.model_validate(
            {
                "steps": [
                    {"match": {"wire_api": ["gemini"]}, "reply": {"text": "g"}},
                    {"match": {"model": "haiku"}, "reply": {"text": "h"}},
                ]
            }
        )
    )
    assert runner.decide(request(user("x"))).plan.text == "DONE"
    gemini = ParsedRequest(wire_api="gemini", tools=[WRITE], messages=[user("x")])
    assert runner.decide(gemini).plan.text == "g"
    haiku = ParsedRequest(
        wire_api="anthropic", model="claude-haiku-5", tools=[WRITE], messages=[user("x")]
    )
    assert runner.decide(haiku).plan.text == "h"


def test_cwd_override_and_missing_capability() -> None:
    runner = ScenarioRunner(
        Scenario.model_validate(
            {
                "cwd": "/override",
                "default": {
                    "tool_calls": [{"capability": "write_file", "path": "a.txt", "content": "x"}]
                },
            }
        )
    )
    plan = runner.decide(request(user("x"), system="Primary working directory: /ignored")).plan
    assert plan.tool_calls[0].arguments == {"file_path": "/override/a.txt", "content": "x"}
    runner.set(
        Scenario.model_validate(
            {"default": {"tool_calls": [{"capability": "shell", "command": "ls"}]}}
        )
    )
    plan = runner.decide(request(user("x"))).plan
    assert plan.tool_calls == []
    assert plan.text == "fake-model: no advertised tool for shell"


@pytest.mark.parametrize(
    ("text", "cwd"),
    [
        ("Primary working directory: /a/b\n", "/a/b"),
        ("<environment_context>\n  <cwd>/c/d</cwd>\n", "/c/d"),
        ("Working directory: /e/f\n", "/e/f"),
        ("- **Workspace Directories:**\n  - /g/h\n", "/g/h"),
        ("Current working directory: /i/j\n", "/i/j"),
        ("You are working in the directory /k/l. Be nice.", "/k/l"),
        ("no directory here", None),
    ],
)
def test_find_cwd(text: str, cwd: str | None) -> None:
    assert find_cwd(request(user("x"), system=text)) == cwd


def test_split_text_and_json_for_schema() -> None:
    assert split_text("abcdefg", 3) == ["abc", "de", "fg"]
    assert split_text("ab", 5) == ["a", "b"]
    assert json_for_schema(
        {
            "type": "object",
            "properties": {
                "a": {"type": "array"},
                "b": {"type": "boolean"},
                "c": {"type": "object", "properties": {"d": {"enum": ["x", "y"]}}},
            },
        }
    ) == {"a": [], "b": False, "c": {"d": "x"}}


def test_testing_all_is_sorted_and_importable() -> None:
    import corral.testing
    import corral.testing.fake_model

    for module in (corral.testing, corral.testing.fake_model):
        assert module.__all__ == sorted(module.__all__)
        for name in module.__all__:
            assert hasattr(module, name), name


def test_has_tool_match_by_capability_or_name() -> None:
    runner = ScenarioRunner(
        Scenario.model_validate(
            {
                "steps": [
                    {"match": {"has_tool": "ask_user"}, "reply": {"text": "asks"}},
                    {"match": {"has_tool": "Write"}, "reply": {"text": "writes"}},
                ]
            }
        )
    )
    assert runner.decide(request(user("x"))).plan.text == "writes"
    ask = ToolInfo(name="AskUserQuestion")
    asking = ParsedRequest(wire_api="anthropic", tools=[WRITE, ask], messages=[user("x")])
    assert runner.decide(asking).plan.text == "asks"


def test_published_schema_file_is_current() -> None:
    # Regenerate with: corral fake-model schema > src/corral/testing/fake_model/scenario.schema.json
    path = Path(__file__).parents[3] / "src/corral/testing/fake_model/scenario.schema.json"
    assert json.loads(path.read_text()) == scenario_json_schema()


def test_reply_text_templates() -> None:
    runner = ScenarioRunner(
        Scenario.model_validate(
            {
                "steps": [
                    {
                        "match": {"last_is_tool_result": True},
                        "reply": {"text": "got $tool_result on turn $turn; $HOME stays"},
                    }
                ],
                "default": {"text": "you said: $user_text"},
            }
        )
    )
    assert runner.decide(request(user("hello"))).plan.text == "you said: hello"
    result = Message(role="tool", text="42", tool_call_id="t")
    assert runner.decide(request(user("x"), result)).plan.text == "got 42 on turn 2; $HOME stays"


def test_a_tool_less_conversation_under_way_is_main() -> None:
    """aider never advertises tools: its chat request (few-shot pairs, then the prompt) is a turn."""
    from corral.testing.fake_model._plan import is_main_request

    assistant = Message(role="assistant", text="Ok.")
    chat = request(user("I am not sharing any files."), assistant, user("Say hello."), tools=False)
    title = request(user("Generate a title"), user("Say hello."), tools=False, system="titles")
    assert is_main_request(chat)
    assert not is_main_request(title)
    assert not is_main_request(request(user("x"), tools=False))
    routed = ParsedRequest(
        wire_api="gemini", messages=[user("a"), assistant, user("b")], json_schema={}
    )
    assert not is_main_request(routed)  # a JSON demand is a side call, history or not
    runner = ScenarioRunner(Scenario.model_validate({"default": {"text": "hello $turn"}}))
    side = runner.decide(title)
    assert (side.is_main, side.turn, side.plan.text) == (False, None, "DONE")
    main = runner.decide(chat)
    assert (main.is_main, main.turn, main.plan.text) == (True, 1, "hello 1")
