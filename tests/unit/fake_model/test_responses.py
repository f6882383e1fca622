from __future__ import annotations

import json
from typing import Any

import httpx

from corral.testing import FakeModelServer

from ._helpers import CODEX_TOOLS, responses_tools, sse_events

INSTRUCTIONS = "You are Codex."
CONTEXT = "<environment_context>\n  <cwd>/tmp/codex-repo</cwd>\n</environment_context>"


def body(extra: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "model": "fake-model",
        "instructions": INSTRUCTIONS,
        "stream": True,
        "tools": responses_tools(CODEX_TOOLS),
        "input": [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": CONTEXT}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "make hello.txt"}],
            },
            *(extra or []),
        ],
    } | fields


def test_streamed_exec_command_then_done(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario(
        {"default": {"tool_calls": [{"capability": "shell", "command": "printf hi > hello.txt"}]}}
    )
    events = sse_events(client.post("/v1/responses", json=body()).text)
    kinds = [e for e, _ in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert all(d["type"] == e for e, d in events)
    args = "".join(d["delta"] for e, d in events if e == "response.function_call_arguments.delta")
    assert json.loads(args) == {"cmd": "printf hi > hello.txt"}
    done = next(d["item"] for e, d in events if e == "response.output_item.done")
    assert done["type"] == "function_call"
    assert done["name"] == "exec_command"
    usage = events[-1][1]["response"]["usage"]
    assert usage["input_tokens"] == 10
    assert usage["output_tokens"] == 5
    assert usage["total_tokens"] == 15

    extra = [
        {
            "type": "function_call",
            "call_id": done["call_id"],
            "name": "exec_command",
            "arguments": args,
        },
        {"type": "function_call_output", "call_id": done["call_id"], "output": "exit code 0"},
    ]
    events = sse_events(client.post("/v1/responses", json=body(extra)).text)
    text = "".join(d["delta"] for e, d in events if e == "response.output_text.delta")
    assert text == "DONE"
    output = events[-1][1]["response"]["output"]
    assert output[0]["content"][0]["text"] == "DONE"
    assert fake.requests.main()[1].tool_results == ["exit code 0"]


def test_nested_additional_tools_and_array_command(
    fake: FakeModelServer, client: httpx.Client
) -> None:
    fake.set_scenario("shell")
    nested = {
        "type": "additional_tools",
        "tools": [
            {
                "type": "namespace",
                "name": "functions",
                "tools": [
                    {
                        "type": "function",
                        "name": "shell",
                        "parameters": {
                            "type": "object",
                            "properties": {
                                "command": {"type": "array", "items": {"type": "string"}}
                            },
                            "required": ["command"],
                        },
                    }
                ],
            }
        ],
    }
    request = body(tools=[])
    request["input"].insert(0, nested)
    data = client.post("/v1/responses", json=request | {"stream": False}).json()
    item = data["output"][0]
    assert item["name"] == "shell"
    assert item["namespace"] == "functions"
    assert json.loads(item["arguments"]) == {"command": ["bash", "-lc", "echo corral-fake-shell"]}
    assert fake.requests.last().tool_names == ["shell"]


def test_freeform_custom_tool(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario({"default": {"tool_calls": [{"capability": "shell", "command": "ls"}]}})
    request = body(tools=[{"type": "custom", "name": "exec_command", "format": {"type": "text"}}])
    events = sse_events(client.post("/v1/responses", json=request).text)
    assert (
        "".join(d["delta"] for e, d in events if e == "response.custom_tool_call_input.delta")
        == "ls"
    )
    item = next(d["item"] for e, d in events if e == "response.output_item.done")
    assert item == {
        "id": item["id"],
        "call_id": item["call_id"],
        "name": "exec_command",
        "status": "completed",
        "type": "custom_tool_call",
        "input": "ls",
    }


def test_reasoning_and_text(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario({"default": {"text": "Hi there", "chunks": 2, "thinking": "pondering"}})
    events = sse_events(client.post("/v1/responses", json=body()).text)
    assert [d["delta"] for e, d in events if e == "response.reasoning_summary_text.delta"] == [
        "pondering"
    ]
    assert [d["delta"] for e, d in events if e == "response.output_text.delta"] == ["Hi t", "here"]
    assert [i["type"] for i in events[-1][1]["response"]["output"]] == ["reasoning", "message"]


def test_question_tool_request_user_input(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario("question")
    data = client.post("/v1/responses", json=body(stream=False)).json()
    item = data["output"][0]
    assert item["name"] == "request_user_input"
    question = json.loads(item["arguments"])["questions"][0]
    assert question["id"] == "q1"
    assert question["header"] == "Question"
    assert [o["label"] for o in question["options"]] == ["red", "blue"]


def test_websocket_upgrade_is_refused_quickly(fake: FakeModelServer, client: httpx.Client) -> None:
    reply = client.get(
        "/v1/responses",
        headers={
            "connection": "Upgrade",
            "upgrade": "websocket",
            "sec-websocket-version": "13",
            "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
            "openai-beta": "responses_websockets=2026-02-06",
        },
    )
    assert reply.status_code == 426
    assert fake.requests.last().endpoint == "websocket-refused"
    # The connection stays usable for the POST fallback.
    assert client.post("/v1/responses", json=body(stream=False)).status_code == 200


def test_write_without_write_tool_falls_back_to_shell(
    fake: FakeModelServer, client: httpx.Client
) -> None:
    # Codex advertises no write tool: writing goes through exec_command.
    fake.set_scenario("write-file")
    data = client.post("/v1/responses", json=body(stream=False)).json()
    item = data["output"][0]
    assert item["name"] == "exec_command"
    assert json.loads(item["arguments"]) == {"cmd": "printf '%s' hi > /tmp/codex-repo/hello.txt"}


def test_write_prefers_apply_patch_when_advertised(
    fake: FakeModelServer, client: httpx.Client
) -> None:
    fake.set_scenario("write-file")
    tools = [
        *responses_tools(CODEX_TOOLS),
        {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
    ]
    data = client.post("/v1/responses", json=body(stream=False, tools=tools)).json()
    item = data["output"][0]
    assert item["type"] == "custom_tool_call"
    assert item["name"] == "apply_patch"
    assert item["input"] == (
        "*** Begin Patch\n*** Add File: /tmp/codex-repo/hello.txt\n+hi\n*** End Patch\n"
    )


def test_code_mode_exec_tool(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario("write-file")
    lite = body(stream=False, tools=[])
    lite["input"].insert(
        0,
        {
            "type": "additional_tools",
            "tools": [
                {
                    "type": "namespace",
                    "name": "functions",
                    "tools": [{"type": "custom", "name": "exec", "format": {"type": "text"}}],
                }
            ],
        },
    )
    item = client.post("/v1/responses", json=lite).json()["output"][0]
    assert item["type"] == "custom_tool_call"
    assert item["input"] == (
        "await tools.exec_command({cmd: \"printf '%s' hi > /tmp/codex-repo/hello.txt\"});\n"
    )


def test_input_image_is_noticed(fake: FakeModelServer, client: httpx.Client) -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    request = body(stream=False)
    request["input"][1]["content"].append(image)
    client.post("/v1/responses", json=request)
    assert fake.requests.any_image()
    assert fake.requests.last_user_text() == "make hello.txt"
