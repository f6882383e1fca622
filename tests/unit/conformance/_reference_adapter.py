"""A minimal adapter that speaks OpenAI Chat Completions to the scripted model server directly.

It exists to test the conformance *machinery* without a real CLI: it streams text, runs a
``write`` tool itself, reports usage — and it deliberately *claims* ``image_input`` without sending
images, so the suite must report that contradiction.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from corral.adapters.base import Attachment, BaseAdapter
from corral.events import (
    AgentInfo,
    EndReason,
    Event,
    FileDiff,
    SessionEnded,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolKind,
    ToolResult,
    TurnCompleted,
    Usage,
)

WRITE_TOOL = {
    "type": "function",
    "function": {
        "name": "write",
        "description": "Write a file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
}


class ReferenceAdapter(BaseAdapter):
    agent_id = "reference"
    display_name = "Reference (Chat Completions)"
    cap_image_input = True  # a false claim, on purpose
    provides_models = False
    provides_usage = False

    def __init__(self, cwd: str | None = None, env: dict[str, str] | None = None) -> None:
        self.cwd = Path(cwd or ".")
        self.base_url = (env or {})["CORRAL_MODEL_BASE_URL"]
        self.prompts: asyncio.Queue[str | None] = asyncio.Queue()
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": f"Working directory: {self.cwd}"}
        ]
        self.client: httpx.AsyncClient | None = None

    async def start(self, session_id: str) -> AgentInfo:
        self.client = httpx.AsyncClient(base_url=self.base_url, timeout=30)
        return self.make_agent_info(model="fake-model")

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self.prompts.put(text)

    async def stream(self) -> AsyncIterator[Event]:
        text = await self.prompts.get()
        if text is None:
            yield SessionEnded(reason=EndReason.COMPLETED)
            return
        self.messages.append({"role": "user", "content": text})
        while True:
            calls: dict[int, dict[str, Any]] = {}
            reply = ""
            assert self.client is not None
            body = {
                "model": "fake-model",
                "stream": True,
                "messages": self.messages,
                "tools": [WRITE_TOOL],
                "stream_options": {"include_usage": True},
            }
            async with self.client.stream("POST", "/v1/chat/completions", json=body) as resp:
                async for line in resp.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    chunk = json.loads(line[6:])
                    if chunk.get("usage"):
                        u = chunk["usage"]
                        yield Usage(
                            input_tokens=u.get("prompt_tokens"),
                            output_tokens=u.get("completion_tokens"),
                        )
                    for choice in chunk.get("choices", []):
                        delta = choice.get("delta", {})
                        if delta.get("content"):
                            reply += delta["content"]
                            yield TextDelta(text=delta["content"])
                        for tc in delta.get("tool_calls") or []:
                            slot = calls.setdefault(tc["index"], {"id": "", "name": "", "args": ""})
                            slot["id"] = tc.get("id") or slot["id"]
                            fn = tc.get("function") or {}
                            slot["name"] = fn.get("name") or slot["name"]
                            slot["args"] += fn.get("arguments") or ""
            if reply:
                yield TextComplete(text=reply)
            self.messages.append(
                {
                    "role": "assistant",
                    "content": reply or None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["args"]},
                        }
                        for c in calls.values()
                    ],
                }
                if calls
                else {"role": "assistant", "content": reply}
            )
            if not calls:
                yield TurnCompleted()
                return
            for c in calls.values():
                args = json.loads(c["args"] or "{}")
                path = Path(args["path"])
                yield ToolCallStarted(
                    call_id=c["id"], name=c["name"], kind=ToolKind.EDIT, input=args, file=str(path)
                )
                path.write_text(args["content"])  # noqa: ASYNC240 - test helper
                yield FileDiff(path=str(path), new_text=args["content"], call_id=c["id"])
                yield ToolCallCompleted(call_id=c["id"], result=ToolResult(output="written"))
                self.messages.append(
                    {"role": "tool", "tool_call_id": c["id"], "content": "written"}
                )

    async def stop(self) -> None:
        await self.prompts.put(None)
        if self.client is not None:
            await self.client.aclose()
