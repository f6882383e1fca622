"""The web app opening a long transcript: 10,000 events, headless Chromium, the real service.

A session is filled with a realistic mix (prompts and their delivery states, streamed text, tool
calls with output, diffs, usage, turn ends), the service runs on 127.0.0.1:0, and Chromium opens
the session page. Measured in the page:

* first contentful paint, and **time to interactive**: from navigation start until the newest
  turns are drawn and two animation frames have passed, so the page has painted them and answers
  input (the page's ``corral:interactive`` mark; goal: under 1 s); then the time until every
  earlier turn is on the page too;
* the anchor, measured in the same page and run: fetching the same transcript and parsing its JSON
  (``fetch`` + ``JSON.parse``), the floor any renderer pays; printed as a ratio;
* scrolling up from the bottom one screen per frame for 60 frames (a fast fling): the longest
  frame and the 95th percentile (jank shows as frames far above 16.7 ms).

Skips (and says so) when ``/usr/bin/chromium`` or Playwright is missing (``make browser``).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from corral.events import (
    Event,
    FileDiff,
    StatusChanged,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolKind,
    ToolResult,
    TurnCompleted,
    Usage,
)
from corral.server import Settings, create_app
from corral.sessions import AdapterResolver, SessionManager, SessionSpec
from corral.testing.scripted_adapter import ScriptedAdapter

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
GOAL_MS = 1000.0


def _turn(i: int) -> list[Event]:
    pid = f"p{i}"
    raw = {"prompt_id": pid, "version": 1, "text": f"prompt number {i}: fix the tests"}
    events: list[Event] = [
        StatusChanged(status=f"prompt.{state}", message=pid, raw={**raw, "state": state})
        for state in ("queued", "sending", "delivered")
    ]
    words = f"Looking at **module {i}**: the failing test asserts `x == {i}`. ".split(" ")
    events += [TextDelta(text=w + " ", message_id=f"m{i}") for w in words]
    events.append(TextComplete(text=" ".join(words), message_id=f"m{i}"))
    for j in range(4):
        cid = f"c{i}-{j}"
        events.append(
            ToolCallStarted(
                call_id=cid,
                name="Bash",
                kind=ToolKind.COMMAND,
                cmd=f"pytest tests/test_{i}_{j}.py",
                input={"command": f"pytest tests/test_{i}_{j}.py"},
            )
        )
        output = "\n".join(f"tests/test_{i}_{j}.py::case_{k} PASSED" for k in range(6))
        events.append(ToolCallCompleted(call_id=cid, result=ToolResult(output=output)))
    diff = f"--- a/m{i}.py\n+++ b/m{i}.py\n@@ -1,2 +1,2 @@\n-x = 0\n+x = {i}\n y = 1\n"
    events.append(FileDiff(path=f"m{i}.py", diff=diff))
    events.append(TextComplete(text=f"Fixed `m{i}.py`; all **6** tests pass.", message_id=f"n{i}"))
    events.append(Usage(input_tokens=1200, output_tokens=300, cost_usd=0.0042))
    events.append(TurnCompleted())
    return events


async def _fill(db: Path, n_events: int) -> tuple[str, int]:
    resolver = AdapterResolver(
        {"scripted": ScriptedAdapter.configured()}, use_env=False, use_entry_points=False
    )
    async with SessionManager(db, resolver=resolver) as mgr:
        sid = (await mgr.create_session(SessionSpec(adapter_id="scripted"), start=False)).id
        count = turns = 0
        while count < n_events:
            events = _turn(turns)[: n_events - count]
            for event in events:
                mgr.emit(sid, event)
            count += len(events)
            turns += isinstance(events[-1], TurnCompleted)
        return sid, turns


class _Service:
    def __init__(self, db: Path) -> None:
        self.app = create_app(Settings(db_path=db))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning"))
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[self.sock])), daemon=True
        )

    def __enter__(self) -> _Service:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the service did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.app.state.manager.hub.close()
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()


_MEASURE = """async ({url, turns}) => {
  const waitFor = async (name) => {
    for (let i = 0; i < 600 && !performance.getEntriesByName(name).length; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await waitFor("corral:interactive");
  const interactive = performance.getEntriesByName("corral:interactive")[0].startTime;
  await waitFor("corral:older-drawn");
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const complete = performance.now();
  const drawn = document.querySelectorAll(".transcript .line.turn-end").length;
  const fcp = performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null;
  const mark = (n) => performance.getEntriesByName(n)[0]?.startTime ?? null;
  const fetched = mark("corral:transcript-fetched");
  const drawnAt = mark("corral:transcript-drawn");
  const t0 = performance.now();
  const data = JSON.parse(await (await fetch(url, {credentials: "same-origin"})).text());
  const anchor = performance.now() - t0;
  const scroller = document.querySelector(".scroller");
  const frames = [];
  const steps = 60;
  scroller.scrollTop = scroller.scrollHeight;
  const page = scroller.clientHeight;
  await new Promise((resolve) => {
    let i = 0;
    let last = performance.now();
    const step = (now) => {
      frames.push(now - last);
      last = now;
      scroller.scrollTop -= page;
      if (++i <= steps) requestAnimationFrame(step); else resolve();
    };
    requestAnimationFrame(step);
  });
  frames.shift();
  frames.sort((a, b) => a - b);
  return { interactive, complete, fcp, drawn, fetched, drawnAt, events: data.length, anchor,
           p95: frames[Math.floor(frames.length * 0.95)], max: frames[frames.length - 1] };
}"""


def run(n_events: int = 10_000) -> dict[str, Any] | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipped: Playwright is not installed (pip install -e '.[dev]')")
        return None
    if not CHROMIUM.exists():
        print(f"skipped: {CHROMIUM} is missing (make browser)")
        return None
    with tempfile.TemporaryDirectory(prefix="corral-bench-web-") as tmp:
        db = Path(tmp) / "corral.db"
        sid, turns = asyncio.run(_fill(db, n_events))
        with _Service(db) as service, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 860})
                token = getattr(service.app.state, "token", None)
                if token:
                    page.context.add_cookies(
                        [{"name": "corral_auth", "value": token, "url": service.url}]
                    )
                page.goto(f"{service.url}/#/s/{sid}")
                page.wait_for_selector("body[data-ready='1']", state="attached", timeout=60_000)
                result: dict[str, Any] = page.evaluate(
                    _MEASURE, {"url": f"/api/sessions/{sid}/events", "turns": turns}
                )
            finally:
                browser.close()
    ok = result["drawn"] == turns and result["events"] == n_events
    tti = result["interactive"]
    print(f"events in the transcript             : {result['events']:9d} ({turns} turns)")
    print(f"anchor: fetch + JSON.parse the events : {result['anchor']:9.1f} ms")
    if result["fetched"] is not None and result["drawnAt"] is not None:
        print(
            f"transcript fetched / drawn at         : {result['fetched']:9.1f} ms /"
            f" {result['drawnAt']:.1f} ms"
        )
    if result["fcp"] is not None:
        print(f"first contentful paint                : {result['fcp']:9.1f} ms")
    print(
        f"time to interactive (the newest turns) : {tti:9.1f} ms   ratio {tti / result['anchor']:.1f}"
        f"   goal < {GOAL_MS:.0f} ms: {'met' if tti < GOAL_MS else 'MISSED'}"
    )
    print(f"earlier turns drawn too (everything)  : {result['complete']:9.1f} ms")
    print(
        f"scroll up a screen a frame, 60 frames : p95 {result['p95']:.1f} ms, "
        f"longest {result['max']:.1f} ms"
    )
    if not ok:
        print(f"ERROR: drew {result['drawn']} of {turns} turns")
    return {**result, "ok": ok, "turns": turns}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_webapp")
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args(argv)
    result = run(args.events)
    return 1 if result is not None and not result["ok"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
