"""A stand-in for a stream-json CLI that misbehaves on purpose (mode in argv[1]).

It answers ``initialize`` like Claude Code, waits for the first user message, then emits the bad
bytes of its mode. Used by transport/driver robustness tests only — never as a parser fixture.
"""

import json
import os
import sys

mode = sys.argv[1]
out = sys.stdout.buffer


def emit(raw: bytes) -> None:
    out.write(raw)
    out.flush()


if mode == "die-at-start":
    sys.stderr.write("boom: cannot start\n")
    sys.exit(3)

init = json.loads(sys.stdin.readline())
emit(
    json.dumps(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": init["request_id"], "response": {}},
        }
    ).encode()
    + b"\n"
)
sys.stdin.readline()  # the user message
emit(b'{"type":"system","subtype":"init","session_id":"s-1","model":"m"}\n')

if mode == "huge":
    chunk = b"x" * (1024 * 1024)
    emit(b'{"type":"assistant","message":{"content":[{"type":"text","text":"')
    for _ in range(100):
        emit(chunk)
    emit(b'"}]}}\n')
elif mode == "truncated":
    emit(b'{"type":"assistant","message":{"content":[{"type":"te\n')
elif mode == "garbage":
    emit(os.urandom(64).replace(b"\n", b"") + b"\xff\xfe\n")
elif mode == "eof":
    sys.stderr.write("fatal: lost my mind\n")
    sys.exit(1)

emit(b'{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s-1"}\n')
sys.stdin.read()  # until the driver closes stdin
