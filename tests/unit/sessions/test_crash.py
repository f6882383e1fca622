"""SIGKILL corral at random points of delivery; see corral.testing._queue_crash.

On both writers: the thread (the library's) and the process (``corral serve``'s, decision 051),
whose kills land on the corral process while its writer's process goes on until the kernel ends
it."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from corral.testing import _queue_crash
from corral.testing._queue_crash import run_trial

TRIALS = {"thread": 200, "process": 100}


@pytest.mark.parametrize("writer", sorted(TRIALS))
def test_crash_trials_lose_nothing_and_deliver_nothing_twice(tmp_path: Path, writer: str) -> None:
    rng = random.Random(8)  # fixed seed: a failure reproduces
    states: Counter[str] = Counter()
    violations: list[str] = []
    killed_mid_queue = 0
    received_but_unacked = 0
    for trial in range(TRIALS[writer]):
        result = run_trial(rng, root=tmp_path, writer=writer)
        violations += [f"trial {trial}: {v}" for v in result.violations]
        states.update(result.states_after_recovery)
        killed_mid_queue += bool(result.states_after_recovery["queued"])
        received_but_unacked += result.indeterminate_received
    assert violations == []
    # The kills really landed inside the delivery windows, not only before or after them.
    assert states["indeterminate"] > 0
    assert states["delivered"] > 0
    assert killed_mid_queue > 0
    assert received_but_unacked > 0  # the provider had it, corral had not recorded the ack


def test_a_child_that_fails_by_itself_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object) -> None:
        raise RuntimeError("the child broke")

    monkeypatch.setattr(_queue_crash, "_child_main", broken)  # the fork inherits it
    result = run_trial(random.Random(8), root=tmp_path)
    assert result.violations == [
        "the child corral exited on its own (code 1): RuntimeError: the child broke"
    ]
