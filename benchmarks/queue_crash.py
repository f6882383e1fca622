"""1,000 SIGKILL crash trials of the prompt queue (see corral.testing._queue_crash).

The anchor is a fork + SIGKILL + wait of a child that does nothing, measured in the same run, so
the ratio says what a trial's restart-and-verify costs beyond process handling.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter

from corral.testing._queue_crash import run_trial


def _empty_fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def run(trials: int = 1000, seed: int = 2026, writer: str = "thread") -> dict[str, float]:
    start = time.perf_counter()
    for _ in range(50):
        _empty_fork()
    anchor = (time.perf_counter() - start) / 50

    rng = random.Random(seed)
    states: Counter[str] = Counter()
    violations: list[str] = []
    received_unacked = 0
    start = time.perf_counter()
    for i in range(trials):
        result = run_trial(rng, writer=writer)
        states.update(result.states_after_recovery)
        received_unacked += result.indeterminate_received
        violations += [f"trial {i}: {v}" for v in result.violations]
    per_trial = (time.perf_counter() - start) / trials
    print(f"crash trials: {trials} (seed {seed}, writer {writer}), violations: {len(violations)}")
    print(f"  prompt states found after recovery: {dict(states)}")
    print(f"  indeterminate prompts the provider had received: {received_unacked}")
    print(
        f"  per trial {per_trial * 1000:.1f} ms; empty fork+kill anchor {anchor * 1000:.2f} ms;"
        f" ratio {per_trial / anchor:.1f}"
    )
    for v in violations[:20]:
        print("  VIOLATION", v)
    return {"violations": float(len(violations)), "per_trial": per_trial, "anchor": anchor}
