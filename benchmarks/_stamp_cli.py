"""A stand-in for Claude Code's stream-json mode that stamps every text delta with the time it
writes it (``bench_live_path``). Benchmarks only, never a fixture.

It answers ``initialize`` (and any other control request) as Claude Code does, and for each user
message prints ``CORRAL_STAMP_EVENTS`` text deltas ``CORRAL_STAMP_INTERVAL`` seconds apart, then
a ``result``. A delta's text is ``[t=NS]``: ``time.monotonic_ns()`` taken just before its line is
written and flushed (CLOCK_MONOTONIC, the clock the observer reads in another process).
"""

from __future__ import annotations

import json
import os
import sys
import time

EVENTS_ENV = "CORRAL_STAMP_EVENTS"
INTERVAL_ENV = "CORRAL_STAMP_INTERVAL"

out = sys.stdout.buffer


def emit(obj: object) -> None:
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


def turn(n: int, events: int, interval: float) -> None:
    emit({"type": "system", "subtype": "init", "session_id": "stamp-1", "model": "stamp"})
    emit({"type": "stream_event", "event": {"type": "message_start", "message": {"id": f"m{n}"}}})
    due = time.monotonic()
    for _ in range(events):
        due += interval
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        # Built before the stamp is taken: the stamp is the last thing before the write.
        head = b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
        head += b'"delta":{"type":"text_delta","text":"[t='
        out.write(head + str(time.monotonic_ns()).encode() + b']"}}}\n')
        out.flush()
    emit({"type": "result", "subtype": "success", "is_error": False, "result": "done"})


def main() -> None:
    events = int(os.environ.get(EVENTS_ENV, "100"))
    interval = float(os.environ.get(INTERVAL_ENV, "0.005"))
    turns = 0
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        if msg.get("type") == "control_request":
            response: dict[str, object] = {
                "subtype": "success",
                "request_id": msg.get("request_id"),
                "response": {},
            }
            emit({"type": "control_response", "response": response})
        elif msg.get("type") == "user":
            turns += 1
            turn(turns, events, interval)


if __name__ == "__main__":
    main()
