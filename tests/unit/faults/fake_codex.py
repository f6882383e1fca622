"""A fake ``codex app-server`` (JSON-RPC without the version field) that misbehaves as
``FAULT_MODE`` says. Started as ``fake_codex.py app-server``."""

from __future__ import annotations

import json
import sys
from typing import Any

import _misbehave as m

THREAD = "thr-fault"


def line(obj: Any) -> None:
    m.write(json.dumps(obj).encode() + b"\n")


def read() -> dict[str, Any] | None:
    raw = sys.stdin.readline()
    return json.loads(raw) if raw else None


def note(method: str, **params: Any) -> dict[str, Any]:
    return {"method": method, "params": {"threadId": THREAD, **params}}


def completed(turn_id: str, status: str) -> None:
    line(note("turn/completed", turn={"id": turn_id, "status": status, "error": None}))


def wait_cancel() -> None:
    while (msg := read()) is not None:
        if msg.get("method") == "turn/interrupt":
            line({"id": msg["id"], "result": {}})
            return
    sys.exit(0)


def main() -> None:
    turns = 0
    while (msg := read()) is not None:
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            line({"id": mid, "result": {"userAgent": "fault/0.0.1"}})
        elif method == "thread/start":
            line({"id": mid, "result": {"thread": {"id": THREAD}, "model": "m"}})
        elif method == "turn/start":
            turns += 1
            turn_id = f"turn-{turns}"
            line({"id": mid, "result": {"turn": {"id": turn_id, "status": "inProgress"}}})
            line(note("turn/started", turn={"id": turn_id, "status": "inProgress"}))
            delta = note("item/agentMessage/delta", turnId=turn_id, itemId="m", delta="first ")
            line(delta)
            m.commit(
                line,
                finish=lambda turn_id=turn_id: completed(turn_id, "completed"),
                cancelled=lambda turn_id=turn_id: completed(turn_id, "interrupted"),
                wait_cancel=wait_cancel,
                bad_message=lambda delta=delta: json.dumps(delta).encode() + b"\n",
            )
        elif mid is not None and method is not None:
            line({"id": mid, "result": {}})


main()
