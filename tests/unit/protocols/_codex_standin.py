"""A stand-in for the codex binary in transport-level tests: ``app-server`` speaks just enough of
the JSON-RPC handshake and turn flow, ``exec`` prints a few JSONL events. ``STANDIN_MODE`` picks
the misbehaviour under test. This is a test double for *transport* behaviour, not codex output:
parser behaviour is tested on recorded transcripts only."""

import json
import os
import sys

MODE = os.environ.get("STANDIN_MODE", "")
THREAD = "thr-standin"


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def note(method: str, **params: object) -> None:
    send({"method": method, "params": {"threadId": THREAD, **params}})


def turn(turn_id: str, text: str) -> None:
    note("turn/started", turn={"id": turn_id, "status": "inProgress"})
    note("item/agentMessage/delta", turnId=turn_id, itemId="m-" + turn_id, delta=text)
    item = {"type": "agentMessage", "id": "m-" + turn_id, "text": text}
    note("item/completed", turnId=turn_id, item=item)
    note("turn/completed", turn={"id": turn_id, "status": "completed", "error": None})


def app_server() -> None:
    turns = 0
    for line in sys.stdin:
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send({"id": mid, "result": {"userAgent": "standin/0.0.1 (test)"}})
        elif method == "thread/start":
            send({"id": mid, "result": {"thread": {"id": THREAD}, "model": "m"}})
        elif method == "turn/start":
            turns += 1
            turn_id = f"turn-{turns}"
            send({"id": mid, "result": {"turn": {"id": turn_id, "status": "inProgress"}}})
            if MODE == "garbage" and turns == 1:
                sys.stdout.write("this is not json\n[1, 2]\n{broken\n\n")
                sys.stdout.flush()
                turn(turn_id, "ok")
            elif MODE == "unknown-request" and turns == 1:
                send({"id": 900, "method": "item/tool/teleport", "params": {"where": "mars"}})
                for reply_line in sys.stdin:
                    reply = json.loads(reply_line)
                    if reply.get("id") == 900 and "method" not in reply:
                        break
                turn(turn_id, "reply:" + json.dumps(reply.get("error", {}).get("code")))
            elif MODE == "die":
                note("turn/started", turn={"id": turn_id, "status": "inProgress"})
                note("item/agentMessage/delta", turnId=turn_id, itemId="m", delta="partial")
                sys.stderr.write("fatal: standin crashed mid-turn\n")
                sys.stderr.flush()
                os._exit(3)
            else:
                turn(turn_id, "ok")


def exec_mode() -> None:
    send({"type": "thread.started", "thread_id": THREAD})
    send({"type": "turn.started"})
    if MODE == "die":
        sys.stdout.write("not json either\n")
        sys.stderr.write("fatal: exec standin crashed\n")
        sys.stdout.flush()
        os._exit(4)
    send({"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": "ok"}})
    send({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}})


if MODE == "refuse":
    sys.stderr.write('Error: approval_policy = "untrusted" is no longer supported\n')
    sys.exit(1)
if sys.argv[1] == "app-server":
    app_server()
else:
    exec_mode()
