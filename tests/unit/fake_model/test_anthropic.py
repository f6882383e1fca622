from __future__ import annotations

import json
from typing import Any

import httpx

from corral.testing import FakeModelServer

from ._helpers import CLAUDE_TOOLS, anthropic_tools, sse_events

SYSTEM = [{"type": "text", "text": "You are Claude Code.\nPrimary working directory: /work/repo\n"}]


def body(
    messages: list[dict[str, Any]], *, stream: bool = True, tools: bool = True
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "claude-opus-4-8",
        "max_tokens": 32000,
        "stream": stream,
        "system": SYSTEM,
        "messages": messages,
    }
    if tools:
        out["tools"] = anthropic_tools(CLAUDE_TOOLS)
    return out


def test_streamed_write_call_resolves_claude_write_tool(
    fake: FakeModelServer, client: httpx.Client
) -> None:
    fake.set_scenario("write-file")
    reply = client.post(
        "/v1/messages?beta=true", json=body([{"role": "user", "content": "make hello.txt"}])
    )
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = sse_events(reply.text)
    names = [e for e, _ in events]
    assert names[0] == "message_start"
    assert names[-1] == "message_stop"
    start = next(d for e, d in events if e == "content_block_start")
    assert start["content_block"]["type"] == "tool_use"
    assert start["content_block"]["name"] == "Write"
    partial = "".join(d["delta"]["partial_json"] for e, d in events if e == "content_block_delta")
    assert json.loads(partial) == {"file_path": "/work/repo/hello.txt", "content": "hi"}
    delta = next(d for e, d in events if e == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["output_tokens"] == 5
    message = events[0][1]["message"]
    assert message["usage"]["input_tokens"] == 10

    # Second request carries the tool result (after a system-reminder text block) → DONE.
    tool_id = start["content_block"]["id"]
    follow = body(
        [
            {"role": "user", "content": "make hello.txt"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": "Write",
                        "input": {"file_path": "/work/repo/hello.txt", "content": "hi"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_id,
                        "content": "File created successfully",
                    },
                    {"type": "text", "text": "<system-reminder>todo</system-reminder>"},
                ],
            },
            {"role": "system", "content": "mid-conversation system message"},
        ]
    )
    events = sse_events(client.post("/v1/messages?beta=true", json=follow).text)
    text = "".join(d["delta"]["text"] for e, d in events if e == "content_block_delta")
    assert text == "DONE"
    assert next(d for e, d in events if e == "message_delta")["delta"]["stop_reason"] == "end_turn"

    main = fake.requests.main()
    assert [r.turn for r in main] == [1, 2]
    assert main[1].last_is_tool_result
    assert fake.requests.with_tool_result(containing="File created")[0].index == main[1].index
    roles = [m.role for m in fake.requests.conversation()]
    assert roles == ["user", "assistant", "user", "tool", "system"]


def test_non_streaming_text_and_thinking(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario({"default": {"text": "hello there", "thinking": "let me think"}})
    reply = client.post(
        "/v1/messages", json=body([{"role": "user", "content": "hi"}], stream=False)
    )
    data = reply.json()
    assert [b["type"] for b in data["content"]] == ["thinking", "text"]
    assert data["content"][1]["text"] == "hello there"
    assert data["stop_reason"] == "end_turn"
    assert data["usage"] == {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def test_streamed_text_in_chunks_with_thinking(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario({"default": {"text": "abcdefghij", "chunks": 4, "thinking": "hmm"}})
    events = sse_events(
        client.post("/v1/messages", json=body([{"role": "user", "content": "x"}])).text
    )
    deltas = [d["delta"] for e, d in events if e == "content_block_delta"]
    assert deltas[0] == {"type": "thinking_delta", "thinking": "hmm"}
    texts = [d["text"] for d in deltas if d["type"] == "text_delta"]
    assert len(texts) == 4
    assert "".join(texts) == "abcdefghij"


def test_two_tool_calls_in_one_reply(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario(
        {
            "default": {
                "tool_calls": [
                    {"capability": "shell", "command": "ls"},
                    {"capability": "read", "path": "README.md"},
                ]
            }
        }
    )
    data = client.post(
        "/v1/messages", json=body([{"role": "user", "content": "x"}], stream=False)
    ).json()
    calls = [(b["name"], b["input"]) for b in data["content"]]
    assert calls == [
        ("Bash", {"command": "ls", "description": "Run a command"}),
        ("Read", {"file_path": "/work/repo/README.md"}),
    ]
    assert len({b["id"] for b in data["content"]}) == 2


def test_question_fills_nested_schema(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario("question")
    data = client.post(
        "/v1/messages", json=body([{"role": "user", "content": "ask"}], stream=False)
    ).json()
    block = data["content"][0]
    assert block["name"] == "AskUserQuestion"
    question = block["input"]["questions"][0]
    assert question["question"] == "Which color should the file be?"
    assert [o["label"] for o in question["options"]] == ["red", "blue"]
    assert question["multiSelect"] is False


def test_title_side_request_gets_json_and_is_not_a_turn(
    fake: FakeModelServer, client: httpx.Client
) -> None:
    fake.set_scenario("write-file")
    side = body([{"role": "user", "content": "Generate a title"}], stream=False, tools=False)
    side["output_config"] = {
        "format": {
            "type": "json_schema",
            "schema": {
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            },
        }
    }
    data = client.post("/v1/messages?beta=true", json=side).json()
    assert json.loads(data["content"][0]["text"]) == {"title": "DONE"}
    record = fake.requests.last()
    assert not record.is_main
    assert record.turn is None
    assert record.step == "side"
    # The write-file step is still unused: the next main request gets it.
    main = client.post("/v1/messages", json=body([{"role": "user", "content": "go"}], stream=False))
    assert main.json()["content"][0]["name"] == "Write"
    assert fake.requests.main()[0].turn == 1


def test_count_tokens_and_head_probe(fake: FakeModelServer, client: httpx.Client) -> None:
    assert client.head("/").status_code == 200
    counted = client.post(
        "/v1/messages/count_tokens?beta=true", json=body([{"role": "user", "content": "x"}])
    )
    assert counted.json() == {"input_tokens": 10}
    assert [r.endpoint for r in fake.requests] == ["probe", "count_tokens"]
    assert fake.requests.model_calls().__len__() == 0


def test_image_block_is_noticed(fake: FakeModelServer, client: httpx.Client) -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
    }
    client.post(
        "/v1/messages",
        json=body([{"role": "user", "content": [image, {"type": "text", "text": "what?"}]}]),
    )
    assert fake.requests.any_image()
    assert fake.requests.last_user_text() == "what?"
