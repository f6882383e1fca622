"""Scenario ``cancel-tool``: interrupt a turn while its shell tool runs ``sleep 30``.

The model asks for ``sleep 30.<digits>``: the fractional digits are unique to the run, so the
sleep's own command line is the marker, found in ``/proc`` whichever shell or sandbox the agent
wraps it in. The scenario checks what the issue promised:

* the turn ends ``cancelled`` within a bound (corral's escalation ladder, if the agent's own
  cancel does not end it);
* once the turn has ended, no process with the marker is left (the cancelled tool's process tree
  is gone), while the session is still open;
* the next prompt reaches the model (the scripted server's request log) and is answered.
"""

from __future__ import annotations

import os
import secrets
import time

from ...events import ApprovalDecision, ApprovalRequested, Event, StopReason, ToolCallStarted
from . import _log
from ._context import Context
from ._scenarios import ConformanceScenario
from ._session import LiveSession, expect

HELLO = "Hello from the scripted model."
CANCEL_BOUND = 20.0
"""Seconds from ``interrupt()`` to the turn's end: cancel, SIGINT, kill, with room for load."""


def marker_pids(marker: str) -> list[int]:
    """Processes whose command line contains ``marker``."""
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[-1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


SLEEP = "sleep {marker}"
PY_SLEEP = "python3 -c 'import time; time.sleep(30)' {marker}"
COMMANDS = {"qwen": PY_SLEEP, "qwen-acp": PY_SLEEP}
"""Qwen Code 0.15.10 refuses a foreground ``sleep`` ("Run blocking commands in the background"),
so its blocking tool is a Python sleep carrying the same marker."""


def _describe(pids: list[int]) -> str:
    """Each pid with its command line and ancestry (for a failure message)."""
    out = []
    for pid in pids:
        chain = []
        current = pid
        for _ in range(8):
            try:
                with open(f"/proc/{current}/stat", "rb") as fh:
                    data = fh.read()
                with open(f"/proc/{current}/cmdline", "rb") as fh:
                    cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")[:80]
            except OSError:
                break
            fields = data[data.rfind(b")") + 2 :].split()
            chain.append(f"{current}[{cmd}] pgid={int(fields[2])} start={int(fields[19])}")
            current = int(fields[1])
            if current <= 1:
                break
        out.append(" <- ".join(chain))
    return "; ".join(out)


def script(duration: str, command: str = SLEEP) -> dict[str, object]:
    return {
        "steps": [
            {
                "name": "call-slow-shell",
                "match": {"user_text_contains": "slow command", "last_is_tool_result": False},
                "times": 1,
                "reply": {
                    "tool_calls": [
                        {"capability": "shell", "command": command.format(marker=duration)}
                    ]
                },
            },
            {
                # The request after the cancel may end in the interrupted call's result.
                "name": "after-cancel",
                "match": {"user_text_contains": "Say hello."},
                "reply": {"text": HELLO, "chunks": 4},
            },
        ],
        "default": {"text": HELLO, "chunks": 4},
    }


async def _allow(s: LiveSession, event: Event) -> None:
    if isinstance(event, ApprovalRequested):
        await s.adapter.respond_approval(event.request_id, ApprovalDecision.ALLOW)


async def cancel_tool(ctx: Context, duration: str) -> None:
    marker = duration  # e.g. "30.000412345": only this run's sleep has it
    async with ctx.session() as s:
        await s.send("Run the slow command.")
        deadline = time.monotonic() + ctx.timeout
        saw_tool = False
        seen: list[str] = []
        while not marker_pids(marker):
            expect(time.monotonic() < deadline, "the sleep never started (no process has it)")
            try:
                _, event = await s.next_event(0.2)
            except AssertionError:
                continue
            await _allow(s, event)
            saw_tool = saw_tool or isinstance(event, ToolCallStarted)
            seen.append(repr(event)[:300])
            expect(
                event.__struct_config__.tag != "turn.completed",
                "the turn ended before the sleep started: " + " | ".join(seen[-8:]),
            )
        t0 = time.monotonic()
        await s.adapter.interrupt()
        turn = await s.turn(CANCEL_BOUND, on_event=lambda e: _allow(s, e))
        elapsed = time.monotonic() - t0
        expect(turn.end is not None, "the session ended instead of the turn")
        assert turn.end is not None
        expect(
            turn.end.stop_reason is StopReason.CANCELLED,
            f"turn ended {turn.end.stop_reason.value}, not cancelled ({turn.end.error};"
            f" {turn.describe()})",
        )
        expect(elapsed <= CANCEL_BOUND, f"cancel took {elapsed:.1f} s")
        left = marker_pids(marker)
        expect(not left, f"the cancelled tool is still running: {_describe(left)}")
        ctx.server_release()
        await s.send("Say hello.")
        after = await s.turn(ctx.timeout, on_event=lambda e: _allow(s, e))
        expect(after.end is not None, "the session ended instead of the turn after the cancel")
        assert after.end is not None
        expect(
            after.end.stop_reason is StopReason.END_TURN,
            f"prompt after cancel ended {after.end.stop_reason.value} ({after.end.error})",
        )
        expect(
            _log.last_main_carries(ctx.server, "Say hello."),
            "the prompt after the cancel never reached the model"
            f" (turn: {after.describe()}; text {after.text!r}; requests:"
            f" {[m.text[:60] for r in ctx.server.requests.main() for m in r.messages][-6:]})",
        )
        expect(
            HELLO in after.text,
            f"the prompt after the cancel got no answer (text {after.text!r}; {after.describe()})",
        )


def unique_duration() -> str:
    return f"30.{secrets.randbelow(10**9):09d}1"


def cancel_tool_scenario(agent: str = "") -> ConformanceScenario:
    """A fresh ``cancel-tool`` scenario (its own marker, so concurrent runs never mix)."""
    duration = unique_duration()

    async def run(ctx: Context) -> None:
        await cancel_tool(ctx, duration)

    return ConformanceScenario(
        "cancel-tool",
        "interrupt a turn during a running `sleep 30` tool; no tool process is left and the"
        " next prompt reaches the model",
        run,
        script(duration, COMMANDS.get(agent, SLEEP)),
        "cancel",
    )
