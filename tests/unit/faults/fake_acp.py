"""A fake ACP agent (JSON-RPC 2.0 over stdio) that misbehaves as ``FAULT_MODE`` says."""

from __future__ import annotations

import json
import sys
from typing import Any

import _misbehave as m

SID = "fault-session"


def line(obj: Any) -> None:
    m.write(json.dumps(obj).encode() + b"\n")


def send(msg: dict[str, Any]) -> None:
    line({"jsonrpc": "2.0", **msg})


def read() -> dict[str, Any] | None:
    raw = sys.stdin.readline()
    return json.loads(raw) if raw else None


def update(delta: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": SID,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": delta},
            },
        },
    }


def wait_cancel() -> None:
    while (msg := read()) is not None:
        if msg.get("method") == "session/cancel":
            return
    sys.exit(0)


def main() -> None:
    while (msg := read()) is not None:
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send(
                {
                    "id": mid,
                    "result": {
                        "protocolVersion": 1,
                        "agentCapabilities": {"loadSession": True},
                        "agentInfo": {"name": "fault", "version": "1.0"},
                    },
                }
            )
        elif method == "session/new":
            send({"id": mid, "result": {"sessionId": SID}})
        elif method == "session/load":  # a restarted agent resumes the session
            send({"id": mid, "result": {}})
        elif method == "session/prompt":
            line(update("first words "))
            m.commit(
                line,
                finish=lambda mid=mid: send({"id": mid, "result": {"stopReason": "end_turn"}}),
                cancelled=lambda mid=mid: send({"id": mid, "result": {"stopReason": "cancelled"}}),
                wait_cancel=wait_cancel,
                bad_message=lambda: json.dumps(update("cut short")).encode() + b"\n",
            )
        elif mid is not None:
            send({"id": mid, "error": {"code": -32601, "message": "no such method"}})


main()
