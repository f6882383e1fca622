"""A stand-in for a stream-json CLI (or a JSON-RPC peer) that prints malformed lines on purpose.

``stream-json``: answers ``initialize`` like Claude Code, waits for the user message, prints lines
that once broke the parser or the read loop, an emoji whose surrogate pair is split across two
text deltas, then a normal ``result``. ``jsonrpc``: answers each request first with ids that match
nothing (``[1]``, ``{}``, ``1.5``), then with the right one. Driver tests only, never a fixture.
"""

import json
import sys

out = sys.stdout.buffer


def emit(raw: bytes) -> None:
    out.write(raw + b"\n")
    out.flush()


if sys.argv[1] == "jsonrpc":
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue  # a notification
        emit(b'{"jsonrpc": "2.0", "method": "note", "params": {}}')
        for bad in ([1], {}, 1.5, [msg["id"]]):
            emit(json.dumps({"jsonrpc": "2.0", "id": bad, "result": "wrong"}).encode())
        emit(b'{"jsonrpc": "2.0", "id": [1], "method": "session/update", "params": {}}')
        emit(b'{"jsonrpc": "2.0", "id": 7, "error": {"code": "x", "message": 5}}')
        emit(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": msg.get("params")}).encode())
    sys.exit(0)

init = json.loads(sys.stdin.readline())
response = {"subtype": "success", "request_id": init["request_id"], "response": {}}
emit(json.dumps({"type": "control_response", "response": response}).encode())
sys.stdin.readline()  # the user message
emit(b'{"type":"system","subtype":"init","session_id":"s-1","model":"m"}')
for bad in (
    b'{"type":"control_response","response":[1]}',
    b'{"type":"control_request","request":"x","request_id":[1]}',
    b'{"type":"stream_event","event":{"type":[1]}}',
    b'{"type":"stream_event","event":{"type":"content_block_start","index":{},"content_block":5}}',
    b'{"type":"assistant","message":{"content":7}}',
    b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":[1]}]}}',
    b'{"type":"result","usage":[],"modelUsage":5,"subtype":[1]}'[:-1],
    b'{"type":"assistant","message":' * 1500 + b"1" + b"}" * 1500,
    b'{"type":"system","subtype":"\\udc80"}',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"\xff\xfe"}]}}',
):
    emit(bad)
emit(b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}}}')
for text in (b'"A\\ud83d"', b'"\\ude00B"'):
    delta = b'{"type":"text_delta","text":' + text + b"}"
    emit(
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":'
        + delta
        + b"}}"
    )
emit(
    b'{"type":"result","subtype":"success","is_error":false,"result":"A\\ud83d\\ude00B","session_id":"s-1"}'
)
sys.stdin.read()  # until the driver closes stdin
