"""Crash trials for the durable prompt queue: SIGKILL corral mid-delivery, restart, check.

One trial forks a child that runs a :class:`~corral.sessions.SessionManager` with the
:class:`~corral.testing.scripted_adapter.ScriptedAdapter`, creates a session and queues a few
prompts. The adapter appends every prompt it accepts to an append-only file — the provider's ground
truth — and the child appends every prompt id whose ``enqueue`` returned to another file (the
prompts corral *accepted*). The child reports each envelope on a pipe; the parent reads a random
number of them, adds a random jitter, and SIGKILLs the child, which lands at a random point of
enqueueing, claiming, handing over, acknowledging or recording.

The parent then restarts corral on the same database and checks:

* no accepted prompt is lost (every accepted id is in the database);
* nothing was delivered twice (no duplicate in the ground truth);
* no prompt is left ``sending``; every ``delivered`` prompt reached the provider exactly once, and
  every prompt the provider has is ``delivered`` or ``indeterminate`` (never ``queued``, which
  would replay it);
* after resuming, every still-queued prompt is delivered exactly once, in queue order, and no
  indeterminate prompt is replayed.

Used by ``tests/unit/sessions/test_crash.py`` (200 trials on the writer thread, 100 on the
writer process) and ``python -m benchmarks`` (1,000, ``--writer`` either).
"""

from __future__ import annotations

import asyncio
import os
import random
import select
import signal
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from ..sessions import (
    AdapterResolver,
    PromptRecord,
    PromptState,
    SessionManager,
    SessionSpec,
    SessionState,
)
from .scripted_adapter import ScriptConfig, ScriptedAdapter

READ_TIMEOUT = 20.0
DRAIN_TIMEOUT = 20.0


@dataclass
class TrialResult:
    ticks_before_kill: int
    child_finished: bool
    states_after_recovery: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    indeterminate_received: int = 0
    """Indeterminate prompts the provider did receive (the kill fell between receipt and ack)."""


def _resolver(config: ScriptConfig) -> AdapterResolver:
    cls = type("CrashAdapter", (ScriptedAdapter,), {"config": config})
    return AdapterResolver({"scripted": cls}, use_env=False, use_entry_points=False)


def _append(path: Path, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode() + b"\n")
    finally:
        os.close(fd)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def _child_main(
    workdir: Path, config: ScriptConfig, prompts: int, progress: int, writer: str
) -> None:
    async with SessionManager(
        workdir / "corral.db", resolver=_resolver(config), writer=writer
    ) as mgr:
        record = await mgr.create_session(SessionSpec(adapter_id="scripted"))

        async def report() -> None:
            async for _ in mgr.subscribe(record.id):
                os.write(progress, b".")

        reporter = asyncio.create_task(report())
        await asyncio.sleep(0)
        ids = []
        for i in range(prompts):
            prompt = mgr.send(record.id, f"prompt-{i}")
            _append(workdir / "accepted", prompt.id)
            ids.append(prompt.id)
            await asyncio.sleep(0)
        await _drain(mgr, record.id, ids)
        reporter.cancel()
    os.write(progress, b"D")


def run_trial(
    rng: random.Random, *, prompts: int = 4, root: Path | None = None, writer: str = "thread"
) -> TrialResult:
    """One trial; ``writer`` is the manager's (``"process"``: the kill lands on the corral
    process, and its writer's process dies with it)."""
    with tempfile.TemporaryDirectory(dir=root, prefix="corral-crash-") as tmp:
        workdir = Path(tmp)
        config = ScriptConfig(
            received_log=str(workdir / "truth"),
            ack_mode=rng.choice(("hook", "return")),
            send_delay=rng.choice((0.0, 0.0, 0.0005)),
            # Latency between the provider receiving a prompt and the ack reaching corral.
            ack_delay=rng.choice((0.0, 0.0005, 0.002)),
        )
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: a corral that will be killed
            os.close(read_fd)
            code = 0
            try:
                asyncio.run(_child_main(workdir, config, prompts, write_fd, writer))
            except BaseException:
                code = 1
                with suppress(BaseException):  # the child must reach its _exit, whatever fails
                    (workdir / "child-error").write_text(traceback.format_exc())
            os._exit(code)
        os.close(write_fd)
        target = rng.randint(0, 8 * prompts + 4)
        try:
            ticks, finished = _read_ticks(read_fd, target)
            deadline = time.perf_counter() + rng.uniform(0, 0.002)
            while time.perf_counter() < deadline:  # jitter, so the kill lands between ticks too
                pass
        finally:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            os.close(read_fd)
        result = TrialResult(ticks_before_kill=ticks, child_finished=finished is True)
        if finished is None:
            code = os.waitstatus_to_exitcode(status)
            error = _lines(workdir / "child-error")
            why = f": {error[-1]}" if error else ""
            result.violations.append(f"the child corral exited on its own (code {code}){why}")
        asyncio.run(_verify(workdir, config, result, writer))
        return result


def _read_ticks(fd: int, target: int) -> tuple[int, bool | None]:
    """Read ``target`` progress ticks; ``True`` if the child finished first, ``None`` if it
    exited without finishing (a bug in the child, reported as a violation)."""
    ticks = 0
    while ticks < target:
        ready, _, _ = select.select([fd], [], [], READ_TIMEOUT)
        if not ready:
            raise TimeoutError("the crash-trial child stopped reporting progress")
        data = os.read(fd, target - ticks)
        if not data:
            return ticks, None
        if b"D" in data:
            return ticks + data.index(b"D"), True
        ticks += len(data)
    return ticks, False


async def _verify(workdir: Path, config: ScriptConfig, result: TrialResult, writer: str) -> None:
    bad = result.violations.append
    accepted = _lines(workdir / "accepted")
    truth_path = workdir / "truth"
    async with SessionManager(
        workdir / "corral.db", resolver=_resolver(config), writer=writer
    ) as mgr:
        sessions = mgr.list_sessions()
        if not sessions:
            if accepted:
                bad("prompts were accepted but no session is stored")
            return
        [session] = sessions
        prompts = {p.id: p for p in mgr.prompts(session.id)}
        by_text = {p.text: p for p in prompts.values()}
        truth = [msgspec.json.decode(line)["text"] for line in _lines(truth_path)]
        result.states_after_recovery.update(str(p.state) for p in prompts.values())
        bad_ids = [pid for pid in accepted if pid not in prompts]
        if bad_ids:
            bad(f"accepted prompts lost: {bad_ids}")
        _check_truth(truth, by_text, bad, phase="after recovery")
        for p in prompts.values():
            if p.state == PromptState.SENDING:
                bad(f"{p.text} still sending after recovery")
            if p.state == PromptState.DELIVERED and truth.count(p.text) != 1:
                bad(f"{p.text} delivered but the provider has it {truth.count(p.text)} times")
        for text in truth:
            state = by_text[text].state if text in by_text else None
            if state not in (PromptState.DELIVERED, PromptState.INDETERMINATE):
                bad(f"provider has {text} but corral says {state}")
        indeterminate = {p.id for p in prompts.values() if p.state == PromptState.INDETERMINATE}
        result.indeterminate_received = sum(prompts[i].text in truth for i in indeterminate)
        queued = [p for p in prompts.values() if p.state == PromptState.QUEUED]

        if session.state == SessionState.CREATED:
            await mgr.start(session.id)
        else:
            await mgr.resume(session.id)
        await asyncio.wait_for(_drain(mgr, session.id, [p.id for p in queued]), DRAIN_TIMEOUT)
        final_truth = [msgspec.json.decode(line)["text"] for line in _lines(truth_path)]
        _check_truth(final_truth, by_text, bad, phase="after resume")
        for p in queued:
            if final_truth.count(p.text) != 1:
                bad(f"queued {p.text} reached the provider {final_truth.count(p.text)} times")
        for pid in indeterminate:
            text = prompts[pid].text
            if final_truth.count(text) != truth.count(text):
                bad(f"indeterminate {text} was replayed")
            if mgr.queue.get(pid).state != PromptState.INDETERMINATE:
                bad(f"indeterminate {text} changed state without a retry")


def _check_truth(
    truth: list[str],
    by_text: Mapping[str, PromptRecord],
    report: Callable[[str], None],
    *,
    phase: str,
) -> None:
    dupes = [t for t, n in Counter(truth).items() if n > 1]
    if dupes:
        report(f"{phase}: delivered twice: {dupes}")
    positions = [by_text[t].position if t in by_text else -1 for t in truth]
    if positions != sorted(positions):
        report(f"{phase}: provider received out of order: {truth}")


async def _drain(mgr: SessionManager, session_id: str, prompt_ids: list[str]) -> None:
    pending = set(prompt_ids)
    if not pending:
        return
    async for env in mgr.subscribe(session_id):
        raw = getattr(env.event, "raw", None)
        if isinstance(raw, dict) and raw.get("state") == PromptState.DELIVERED:
            pending.discard(raw.get("prompt_id"))
        if not pending or all(mgr.queue.get(i).state == PromptState.DELIVERED for i in pending):
            return
