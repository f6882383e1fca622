"""A stand-in ACP agent for driver tests (not a vendor fixture): behaviour chosen by the prompt.

prompt "garbage"     prints a line that is not JSON-RPC, then answers normally
prompt "unknown"     calls a client method corral does not serve, reports the error code it got
prompt "die"         streams a chunk, then exits with code 7 mid-turn
prompt "ask"         asks permission (options allow/reject), reports the chosen outcome
prompt "ask-cancel"  asks permission and waits for session/cancel
prompt "outside"     asks the client to read /etc/passwd through fs/read_text_file
anything else        answers "ok"
"""

import json
import os
import sys

NEED_AUTH = os.environ.get("STANDIN_AUTH") == "1"
authenticated = [False]

_next_id = [100]
_pending: dict[int, dict] = {}


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n")
    sys.stdout.flush()


def call(method: str, params: dict) -> dict:
    _next_id[0] += 1
    rid = _next_id[0]
    send({"id": rid, "method": method, "params": params})
    while True:
        msg = json.loads(sys.stdin.readline())
        if msg.get("id") == rid and "method" not in msg:
            return msg
        handle(msg)


def chunk(sid: str, text: str) -> None:
    send(
        {
            "method": "session/update",
            "params": {
                "sessionId": sid,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text},
                },
            },
        }
    )


cancelled = [False]


def handle(msg: dict) -> None:
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "initialize":
        send(
            {
                "id": msg["id"],
                "result": {
                    "protocolVersion": 1,
                    "agentCapabilities": {
                        "loadSession": False,
                        "promptCapabilities": {"image": True},
                        "sessionCapabilities": {}
                        if os.environ.get("STANDIN_NO_RESUME")
                        else {"resume": {}},
                    },
                    "authMethods": [{"id": "key", "name": "API key"}],
                    "agentInfo": {"name": "standin", "version": "1.0"},
                },
            }
        )
    elif method == "authenticate":
        authenticated[0] = params.get("methodId") == "key"
        send({"id": msg["id"], "result": {}})
    elif method == "session/new" and NEED_AUTH and not authenticated[0]:
        send({"id": msg["id"], "error": {"code": -32000, "message": "Authentication required"}})
    elif method == "session/resume":
        send({"id": msg["id"], "result": {}})
        chunk(params["sessionId"], "resumed " + params["sessionId"])
    elif method == "session/new":
        send(
            {
                "id": msg["id"],
                "result": {
                    "sessionId": "s1",
                    "modes": {
                        "currentModeId": "default",
                        "availableModes": [
                            {"id": "default", "name": "Default"},
                            {"id": "plan", "name": "Plan"},
                        ],
                    },
                    "configOptions": [
                        {
                            "id": "model",
                            "name": "Model",
                            "type": "select",
                            "currentValue": "m1",
                            "options": [
                                {"value": "m1", "name": "m1"},
                                {"value": "m2", "name": "m2"},
                            ],
                        }
                    ],
                },
            }
        )
    elif method == "session/set_mode":
        send({"id": msg["id"], "result": {}})
        send(
            {
                "method": "session/update",
                "params": {
                    "sessionId": "s1",
                    "update": {
                        "sessionUpdate": "current_mode_update",
                        "currentModeId": params["modeId"],
                    },
                },
            }
        )
    elif method == "session/set_config_option":
        send({"id": msg["id"], "result": {"configOptions": []}})
        chunk("s1", f"config {params['configId']}={params['value']}")
    elif method == "session/cancel":
        cancelled[0] = True
    elif method == "session/prompt":
        prompt(msg["id"], params)
    elif "id" in msg and method is not None:
        send({"id": msg["id"], "error": {"code": -32601, "message": "no"}})


def prompt(rid: int, params: dict) -> None:
    sid = params["sessionId"]
    text = params["prompt"][0]["text"]
    stop = "end_turn"
    if text == "garbage":
        sys.stdout.write("this is not json-rpc\n")
        sys.stdout.write("[1, 2, 3]\n")
        sys.stdout.flush()
        chunk(sid, "after garbage")
    elif text == "unknown":
        reply = call("x/unknown_method", {"sessionId": sid})
        chunk(sid, f"error {reply.get('error', {}).get('code')}")
    elif text == "die":
        chunk(sid, "about to die")
        sys.exit(7)
    elif text in ("ask", "ask-cancel"):
        send(
            {
                "method": "session/update",
                "params": {
                    "sessionId": sid,
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "c1",
                        "title": "rm -rf x",
                        "kind": "execute",
                        "status": "pending",
                        "rawInput": {"command": "rm -rf x"},
                    },
                },
            }
        )
        reply = call(
            "session/request_permission",
            {
                "sessionId": sid,
                "toolCall": {"toolCallId": "c1"},
                "options": [
                    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "always", "name": "Always", "kind": "allow_always"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                ],
            },
        )
        outcome = reply["result"]["outcome"]
        chunk(sid, json.dumps(outcome, sort_keys=True))
        if outcome["outcome"] == "cancelled":
            stop = "cancelled"
        elif outcome.get("optionId") == "no":
            send(
                {
                    "method": "session/update",
                    "params": {
                        "sessionId": sid,
                        "update": {
                            "sessionUpdate": "tool_call_update",
                            "toolCallId": "c1",
                            "status": "failed",
                        },
                    },
                }
            )
        else:
            send(
                {
                    "method": "session/update",
                    "params": {
                        "sessionId": sid,
                        "update": {
                            "sessionUpdate": "tool_call_update",
                            "toolCallId": "c1",
                            "status": "completed",
                            "content": [
                                {"type": "content", "content": {"type": "text", "text": "done"}}
                            ],
                        },
                    },
                }
            )
    elif text == "term":
        created = call(
            "terminal/create",
            {
                "sessionId": sid,
                "command": "/bin/sh",
                "args": ["-c", "pwd; printf 0123456789"],
                "outputByteLimit": 4,
            },
        )
        tid = created["result"]["terminalId"]
        status = call("terminal/wait_for_exit", {"sessionId": sid, "terminalId": tid})["result"]
        out = call("terminal/output", {"sessionId": sid, "terminalId": tid})["result"]
        call("terminal/release", {"sessionId": sid, "terminalId": tid})
        gone = call("terminal/output", {"sessionId": sid, "terminalId": tid})
        chunk(
            sid, json.dumps([status["exitCode"], out["output"], out["truncated"], "error" in gone])
        )
    elif text == "outside":
        reply = call("fs/read_text_file", {"sessionId": sid, "path": "/etc/passwd"})
        chunk(sid, f"error {reply.get('error', {}).get('code')}")
    else:
        chunk(sid, "ok")
    send(
        {
            "id": rid,
            "result": {
                "stopReason": stop,
                "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
            },
        }
    )


for line in sys.stdin:
    if line.strip():
        handle(json.loads(line))
