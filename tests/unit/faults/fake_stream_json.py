"""A fake stream-json agent (Claude Code's protocol) that misbehaves as ``FAULT_MODE`` says."""

from __future__ import annotations

import json
import sys
from typing import Any

import _misbehave as m

SID = "fault-session"


def line(obj: Any) -> None:
    m.write(json.dumps(obj).encode() + b"\n")


def read() -> dict[str, Any] | None:
    raw = sys.stdin.readline()
    return json.loads(raw) if raw else None


def reply(request_id: str) -> None:
    line(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": {}},
        }
    )


def text(delta: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": delta}]},
        "session_id": SID,
    }


def result(subtype: str = "success") -> None:
    obj = {
        "type": "result",
        "subtype": subtype,
        "is_error": subtype != "success",
        "result": "ok",
        "session_id": SID,
    }
    if subtype != "success":
        obj["terminal_reason"] = "aborted_tools"
    line(obj)


def wait_cancel() -> None:
    while (msg := read()) is not None:
        if msg.get("type") == "control_request":
            reply(msg["request_id"])
            if msg["request"].get("subtype") == "interrupt":
                return
    sys.exit(0)


def main() -> None:
    while (msg := read()) is not None:
        if msg.get("type") == "control_request":
            reply(msg["request_id"])
            continue
        if msg.get("type") != "user":
            continue
        line({"type": "system", "subtype": "init", "session_id": SID, "model": "fake"})
        line(text("first words "))
        m.commit(
            line,
            finish=result,
            cancelled=lambda: result("error_during_execution"),
            wait_cancel=wait_cancel,
            bad_message=lambda: json.dumps(text("cut short")).encode() + b"\n",
        )


main()
