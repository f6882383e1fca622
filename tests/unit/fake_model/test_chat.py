from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from corral.testing import FakeModelServer

from ._helpers import OPENCODE_TOOLS, PI_TOOLS, chat_tools, sse_events


def body(
    system: str,
    tools: list[Any],
    *,
    stream: bool = True,
    usage: bool = True,
    extra: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "fake-model",
        "stream": stream,
        "tools": chat_tools(tools),
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": "make hello.txt"},
            *(extra or []),
        ],
    }
    if usage:
        out["stream_options"] = {"include_usage": True}
    return out


def tool_calls(events: list[tuple[str | None, Any]]) -> list[tuple[str, dict[str, Any]]]:
    names: dict[int, str] = {}
    args: dict[int, str] = {}
    for _, data in events:
        if data == "[DONE]" or not data["choices"]:
            continue
        for call in data["choices"][0]["delta"].get("tool_calls", []):
            if "id" in call:
                names[call["index"]] = call["function"]["name"]
            args[call["index"]] = args.get(call["index"], "") + call["function"]["arguments"]
    return [(names[i], json.loads(args[i])) for i in sorted(names)]


@pytest.mark.parametrize(
    ("system", "tools", "expected"),
    [
        (
            "Current working directory: /home/u/proj",
            PI_TOOLS,
            ("write", {"path": "/home/u/proj/hello.txt", "content": "hi"}),
        ),
        (
            "Working directory: /srv/app\nIs directory a git repo: yes",
            OPENCODE_TOOLS,
            ("write", {"content": "hi", "filePath": "/srv/app/hello.txt"}),
        ),
        (
            "You are Qwen Code. You are working in the directory /q/w.",
            [
                (
                    "write_file",
                    {
                        "type": "object",
                        "properties": {
                            "file_path": {"type": "string"},
                            "content": {"type": "string"},
                        },
                    },
                )
            ],
            ("write_file", {"file_path": "/q/w/hello.txt", "content": "hi"}),
        ),
    ],
)
def test_streamed_write_by_capability(
    fake: FakeModelServer,
    client: httpx.Client,
    system: str,
    tools: list[Any],
    expected: tuple[str, dict[str, Any]],
) -> None:
    fake.set_scenario("write-file")
    events = sse_events(client.post("/v1/chat/completions", json=body(system, tools)).text)
    assert events[-1] == (None, "[DONE]")
    assert events[0][1]["choices"][0]["delta"]["role"] == "assistant"
    assert tool_calls(events) == [expected]
    finish = [d["choices"][0]["finish_reason"] for _, d in events[:-1] if d["choices"]]
    assert finish[-1] == "tool_calls"
    assert events[-2][1]["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
    }


def test_usage_chunk_only_when_asked(fake: FakeModelServer, client: httpx.Client) -> None:
    events = sse_events(
        client.post("/v1/chat/completions", json=body("", PI_TOOLS, usage=False)).text
    )
    assert all("usage" not in d for _, d in events if d != "[DONE]")


def test_tool_result_round_trip_and_shell(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario("shell")
    first = client.post("/v1/chat/completions", json=body("", OPENCODE_TOOLS, stream=False)).json()
    call = first["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == {
        "command": "echo corral-fake-shell",
    }
    assert first["choices"][0]["finish_reason"] == "tool_calls"
    assert first["usage"]["total_tokens"] == 15
    extra = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "corral-fake-shell\n"},
    ]
    second = client.post(
        "/v1/chat/completions", json=body("", OPENCODE_TOOLS, stream=False, extra=extra)
    ).json()
    assert second["choices"][0]["message"]["content"] == "DONE"
    assert second["choices"][0]["finish_reason"] == "stop"
    carried = fake.requests.with_tool_result(containing="corral-fake-shell")
    assert len(carried) == 1
    assert carried[0].turn == 2
    conversation = carried[0].messages
    assert [m.role for m in conversation] == ["system", "user", "assistant", "tool"]
    assert conversation[2].tool_calls[0].name == "bash"


def test_json_object_side_request(fake: FakeModelServer, client: httpx.Client) -> None:
    side = {
        "model": "m",
        "messages": [{"role": "user", "content": "title?"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "t",
                "schema": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
                    "required": ["title", "n"],
                },
            },
        },
    }
    data = client.post("/v1/chat/completions", json=side).json()
    assert json.loads(data["choices"][0]["message"]["content"]) == {"title": "DONE", "n": 1}
    plain = client.post(
        "/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "Generate a title for this conversation"}],
        },
    ).json()
    assert plain["choices"][0]["message"]["content"] == "DONE"
    assert len(fake.requests.side()) == 2
    assert len(fake.requests.main()) == 0


def test_image_part_is_noticed(fake: FakeModelServer, client: httpx.Client) -> None:
    client.post(
        "/v1/chat/completions",
        json={
            "model": "m",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    ],
                }
            ],
        },
    )
    assert fake.requests.any_image()
    assert fake.requests.last_user_text() == "look"


def test_text_edit_client_chat_is_a_main_turn(fake: FakeModelServer, client: httpx.Client) -> None:
    """The shape aider 0.86.2 sends (no tools; few-shot pairs before the prompt) gets the
    scenario's text, not the side answer, and counts as turn 1; a title request stays side."""
    fake.set_scenario({"default": {"text": "Hello from the scripted model."}})
    title = {
        "model": "m",
        "stream": True,
        "messages": [
            {"role": "system", "content": "You are a title generator."},
            {"role": "user", "content": "Say hello."},
        ],
    }
    assert "DONE" in client.post("/v1/chat/completions", json=title).text
    chat = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Act as an expert software developer."},
            {"role": "user", "content": "I am not sharing any files that you can edit yet."},
            {"role": "assistant", "content": "Ok."},
            {"role": "user", "content": "Say hello."},
        ],
    }
    data = client.post("/v1/chat/completions", json=chat).json()
    assert data["choices"][0]["message"]["content"] == "Hello from the scripted model."
    assert [r.turn for r in fake.requests.main()] == [1]
    assert len(fake.requests.side()) == 1
