"""The faults a fake agent can commit mid-turn, shared by the per-protocol fake agents.

``FAULT_MODE`` picks one; ``FAULT_PIDFILE`` (optional) receives pids the test checks afterwards.
Each fake agent speaks just enough of its protocol to start a session and a turn, writes one text
delta, then calls :func:`commit` with two callbacks of its own protocol: ``line(obj)`` writes one
protocol message, ``wait_cancel()`` blocks until the protocol's cancel arrives. These are test
doubles for *process* behaviour, never parser fixtures.

Modes (after the first delta of the first turn):

ok            finish the turn normally
crash         write to stderr and exit 3 mid-turn
hang          stop writing and stop reading; a grandchild (same group) sleeps meanwhile
ignore-term   like hang, with SIGINT and SIGTERM ignored (only SIGKILL ends it)
stderr-flood  write 50 MB to stderr, then finish the turn
huge          write one 100 MB line, then finish the turn
partial       write half a message with no newline and exit 0
deep          write a message nested 2,000 deep, then finish the turn
malformed     write lines that are not the protocol (not JSON, wrong types, bad UTF-8), then finish
tool-sleep    start ``sleep 30`` in its own session (like a sandboxed tool), answer the cancel by
              ending the turn cancelled, and leave the sleep running
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

MODE = os.environ.get("FAULT_MODE", "ok")
PIDFILE = os.environ.get("FAULT_PIDFILE")
MARKER = os.environ.get("FAULT_MARKER", "corral-fault-marker")

raw_out = sys.stdout.buffer


def write(data: bytes) -> None:
    raw_out.write(data)
    raw_out.flush()


def note_pid(pid: int) -> None:
    if PIDFILE:
        with open(PIDFILE, "a") as fh:
            fh.write(f"{pid}\n")


def deep_line(message: bytes, depth: int = 2000) -> bytes:
    """``message`` (one JSON object line) with a field nested ``depth`` arrays deep added."""
    nest = b"[" * depth + b'"bottom"' + b"]" * depth
    return b'{"corral_deep": ' + nest + b", " + message.lstrip()[1:]


def _sleeper(new_session: bool) -> int:
    proc = subprocess.Popen(
        ["sleep", "30", MARKER] if sys.platform != "darwin" else ["sleep", "30"],
        start_new_session=new_session,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    note_pid(proc.pid)
    return proc.pid


def hang_forever() -> None:
    while True:
        time.sleep(3600)


def armed() -> bool:
    """The fault fires once per test: a restarted agent (resumed by the driver) behaves."""
    flag = (PIDFILE or "") + ".fired"
    if not PIDFILE or os.path.exists(flag):
        return not PIDFILE
    with open(flag, "w"):
        pass
    return True


def commit(
    line: Callable[[Any], None],
    finish: Callable[[], None],
    cancelled: Callable[[], None],
    wait_cancel: Callable[[], None],
    bad_message: Callable[[], bytes],
) -> None:
    """Commit the fault of MODE, then end the turn (unless the fault ends the process)."""
    note_pid(os.getpid())
    if MODE == "ok" or not armed():
        finish()
        return
    if MODE == "crash":
        sys.stderr.write("fatal: fake agent crashed mid-turn\n")
        sys.stderr.flush()
        os._exit(3)
    if MODE in ("hang", "ignore-term"):
        if MODE == "ignore-term":
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _sleeper(new_session=False)
        hang_forever()
    if MODE == "stderr-flood":
        block = b"E" * (1024 * 1024) + b"\n"
        for _ in range(50):
            sys.stderr.buffer.write(block)
        sys.stderr.flush()
    elif MODE == "huge":
        write(b'{"pad":"' + b"x" * (100 * 1024 * 1024) + b'"}\n')
    elif MODE == "partial":
        write(bad_message()[:-5])
        os._exit(0)
    elif MODE == "deep":
        write(deep_line(bad_message()))
    elif MODE == "malformed":
        write(b"this is not json\n")
        write(b"[1, 2, 3]\n")
        write(b'{"type": 7, "id": [1], "method": null, "params": "x"}\n')
        write(b"\xff\xfe\xfd not utf-8\n")
        write(b'{"unterminated": \n')
        write(json.dumps({"id": {"a": 1}, "result": None}).encode() + b"\n")
    elif MODE == "tool-sleep":
        _sleeper(new_session=True)
        wait_cancel()
        cancelled()
        return
    finish()
