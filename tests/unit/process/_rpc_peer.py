"""A tiny JSON-RPC peer for the client tests (run as a child process, speaks one JSON per line)."""

import json
import sys

NEXT_ID = 1000


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def ask(method: str) -> dict:
    """Send a request to the client and wait for its reply (ignoring anything else)."""
    global NEXT_ID
    NEXT_ID += 1
    send({"jsonrpc": "2.0", "id": NEXT_ID, "method": method, "params": {"q": 1}})
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("id") == NEXT_ID and "method" not in msg:
            return msg
    sys.exit(0)


for line in sys.stdin:
    msg = json.loads(line)
    method, mid, params = msg.get("method"), msg.get("id"), msg.get("params")
    if mid is None:
        send(
            {
                "jsonrpc": "2.0",
                "method": "got_notification",
                "params": {"method": method, "has_jsonrpc": "jsonrpc" in msg},
            }
        )
    elif method == "echo":
        send({"jsonrpc": "2.0", "id": mid, "result": params})
    elif method == "fail":
        send(
            {
                "jsonrpc": "2.0",
                "id": mid,
                "error": {"code": 42, "message": "nope", "data": {"why": "asked"}},
            }
        )
    elif method == "ask_client":
        reply = ask("client/ping")
        send({"jsonrpc": "2.0", "id": mid, "result": reply})
    elif method == "ask_unknown":
        reply = ask("weird/method")
        send({"jsonrpc": "2.0", "id": mid, "result": reply})
    elif method == "noise":
        sys.stdout.write("not json at all\n")
        send({"jsonrpc": "2.0", "method": "tick", "params": [1]})
        send({"jsonrpc": "2.0", "id": mid, "result": "ok"})
    elif method == "silent":
        pass
    elif method == "die":
        sys.stderr.write("fatal: peer crashed\n")
        sys.exit(7)
