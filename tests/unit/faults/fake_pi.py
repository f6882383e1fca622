"""A fake ``pi --mode rpc`` agent that misbehaves as ``FAULT_MODE`` says."""

from __future__ import annotations

import json
import sys
from typing import Any

import _misbehave as m


def line(obj: Any) -> None:
    m.write(json.dumps(obj).encode() + b"\n")


def read() -> dict[str, Any] | None:
    raw = sys.stdin.readline()
    return json.loads(raw) if raw else None


def respond(msg: dict[str, Any], data: Any = None) -> None:
    line(
        {"id": msg.get("id"), "type": "response", "command": msg.get("type"), "success": True}
        | ({"data": data} if data is not None else {})
    )


def delta(text: str) -> dict[str, Any]:
    return {
        "type": "message_update",
        "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": text},
    }


def end(stop: str) -> None:
    line(
        {"type": "message_end", "message": {"role": "assistant", "content": [], "stopReason": stop}}
    )
    line({"type": "agent_end", "messages": []})


def wait_cancel() -> None:
    while (msg := read()) is not None:
        respond(msg)
        if msg.get("type") == "abort":
            return
    sys.exit(0)


def main() -> None:
    while (msg := read()) is not None:
        kind = msg.get("type")
        if kind == "get_state":
            respond(msg, {"sessionId": "fault-session", "model": {"id": "fake"}})
        elif kind == "prompt":
            respond(msg)
            line({"type": "agent_start"})
            line({"type": "message_start", "message": {"role": "assistant", "content": []}})
            line(delta("first words "))
            m.commit(
                line,
                finish=lambda: end("stop"),
                cancelled=lambda: end("aborted"),
                wait_cancel=wait_cancel,
                bad_message=lambda: json.dumps(delta("cut short")).encode() + b"\n",
            )
        else:
            respond(msg)


main()
