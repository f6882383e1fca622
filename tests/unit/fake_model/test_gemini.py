from __future__ import annotations

import json
from typing import Any

import httpx

from corral.testing import FakeModelServer

from ._helpers import GEMINI_TOOLS, gemini_tools, sse_events

SYSTEM = {"parts": [{"text": "You are Gemini CLI.\n- **Workspace Directories:**\n  - /g/repo\n"}]}
STREAM = "/v1beta/models/fake-model:streamGenerateContent?alt=sse"


def body(contents: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "systemInstruction": SYSTEM,
        "tools": gemini_tools(GEMINI_TOOLS),
        "contents": contents or [{"role": "user", "parts": [{"text": "make hello.txt"}]}],
    } | fields


def test_streamed_function_call_then_done(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario("write-file")
    reply = client.post(STREAM, json=body(), headers={"x-goog-api-key": "secret"})
    events = sse_events(reply.text)
    assert len(events) == 1
    candidate = events[0][1]["candidates"][0]
    call = candidate["content"]["parts"][0]["functionCall"]
    assert call["name"] == "write_file"
    assert call["args"] == {"file_path": "/g/repo/hello.txt", "content": "hi"}
    assert candidate["finishReason"] == "STOP"
    assert events[0][1]["usageMetadata"] == {
        "promptTokenCount": 10,
        "candidatesTokenCount": 5,
        "totalTokenCount": 15,
    }
    assert "x-goog-api-key" not in fake.requests.last().headers

    contents = [
        {"role": "user", "parts": [{"text": "make hello.txt"}]},
        {"role": "model", "parts": [{"functionCall": call}]},
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": call["id"],
                        "name": "write_file",
                        "response": {"output": "Successfully created and wrote to new file"},
                    }
                }
            ],
        },
    ]
    events = sse_events(client.post(STREAM, json=body(contents)).text)
    assert events[-1][1]["candidates"][0]["content"]["parts"] == [{"text": "DONE"}]
    assert fake.requests.with_tool_result(containing="Successfully created")[0].turn == 2


def test_streamed_text_chunks(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario("text")
    events = sse_events(client.post(STREAM, json=body()).text)
    texts = [d["candidates"][0]["content"]["parts"][0]["text"] for _, d in events]
    assert "".join(texts) == "Hello from the fake model."
    assert len(texts) == 3
    assert "finishReason" not in events[0][1]["candidates"][0]
    assert events[-1][1]["candidates"][0]["finishReason"] == "STOP"


def test_router_call_is_a_json_side_request(fake: FakeModelServer, client: httpx.Client) -> None:
    router = {
        "contents": [{"role": "user", "parts": [{"text": "classify"}]}],
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": {
                "type": "object",
                "properties": {
                    "complexity_reasoning": {"type": "string"},
                    "complexity_score": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                "required": ["complexity_reasoning", "complexity_score"],
            },
        },
    }
    data = client.post("/v1beta/models/gemini-3.5-flash-lite:generateContent", json=router).json()
    answer = json.loads(data["candidates"][0]["content"]["parts"][0]["text"])
    assert answer == {"complexity_reasoning": "DONE", "complexity_score": 1}
    next_speaker = {
        "contents": [{"role": "user", "parts": [{"text": "who next?"}]}],
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseSchema": {
                "type": "OBJECT",
                "properties": {
                    "reasoning": {"type": "STRING"},
                    "next_speaker": {"type": "STRING", "enum": ["model", "user"]},
                },
                "required": ["reasoning", "next_speaker"],
            },
        },
    }
    data = client.post("/v1beta/models/m:generateContent", json=next_speaker).json()
    assert (
        json.loads(data["candidates"][0]["content"]["parts"][0]["text"])["next_speaker"] == "user"
    )
    assert [r.model for r in fake.requests.side()] == ["gemini-3.5-flash-lite", "m"]
    assert not fake.requests.main()


def test_non_streaming_generate_with_tools(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario(
        {"default": {"text": "ok", "tool_calls": [{"capability": "shell", "command": "ls"}]}}
    )
    data = client.post("/v1beta/models/fake-model:generateContent", json=body()).json()
    parts = data["candidates"][0]["content"]["parts"]
    assert parts[0] == {"text": "ok"}
    assert parts[1]["functionCall"]["name"] == "run_shell_command"
    assert parts[1]["functionCall"]["args"] == {"command": "ls", "description": "Run a command"}


def test_count_tokens_embed_and_models(fake: FakeModelServer, client: httpx.Client) -> None:
    assert client.post("/v1beta/models/m:countTokens", json=body()).json() == {"totalTokens": 10}
    embedded = client.post(
        "/v1beta/models/e:embedContent", json={"content": {"parts": [{"text": "x"}]}}
    )
    assert len(embedded.json()["embedding"]["values"]) == 8
    listing = client.get("/v1beta/models", params={"key": "secret"}).json()
    assert listing["models"][0]["name"] == "models/fake-model"
    assert fake.requests.last().query == {}
    assert [r.endpoint for r in fake.requests] == ["countTokens", "embedContent", "models"]


def test_stream_without_alt_sse_is_a_json_array(
    fake: FakeModelServer, client: httpx.Client
) -> None:
    fake.set_scenario("text")
    data = client.post("/v1beta/models/m:streamGenerateContent", json=body()).json()
    assert data[0]["candidates"][0]["content"]["parts"][0]["text"] == "Hello from the fake model."


def test_inline_image_is_noticed(fake: FakeModelServer, client: httpx.Client) -> None:
    contents = [
        {
            "role": "user",
            "parts": [{"text": "see"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}],
        }
    ]
    client.post(STREAM, json=body(contents))
    assert fake.requests.any_image()
