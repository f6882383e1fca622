"""What a run of ``bench_overhead`` can say about the one-shot goal, given its own noise.

The bare CLI and ``corral run`` take turns, so round *i* gives one difference ``corral_i −
bare_i`` that a slow minute of the machine hits on both sides. The bare CLIs' own times move by
100–400 ms between runs (docs/performance.md, part 1), more than the 50 ms the goal allows, so
the difference of two medians can read "missed" in one run and "met" in the next for the same
build. This module gives the median of the per-round differences and a distribution-free
confidence interval for it: the *k*-th smallest and *k*-th largest difference, with *k* the
largest for which the binomial coverage is at least the level asked (no assumption about the
shape of the noise, only that rounds are independent). A run **shows** the goal met when the
whole interval is within it, **shows** it missed when the whole interval is past it, and is
**undecided** otherwise; with fewer than five rounds no interval reaches 90 % and every run is
undecided.

The goal (issue 20) is ≤ ×1.10 and ≤ 50 ms added: for one bare time, ≤ min(50 ms, 10 % of it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ._overhead_docs import GOAL_ADDED_MS, GOAL_RATIO


def coverage(n: int, k: int) -> float:
    """P(the k-th smallest of n ≤ the median ≤ the k-th largest), for a continuous noise."""
    if not 1 <= k <= (n + 1) // 2:
        raise ValueError(f"k={k} is not between 1 and {(n + 1) // 2} for n={n}")
    tail = sum(math.comb(n, i) for i in range(k)) / 2**n
    return 1.0 - 2.0 * tail


def median_interval(values: Sequence[float], level: float = 0.9) -> tuple[float, float] | None:
    """The order-statistic interval for the median of ``values`` at ``level``, or ``None`` when
    there are too few values for any interval to reach it."""
    ordered = sorted(values)
    n = len(ordered)
    best = None
    for k in range(1, (n + 1) // 2 + 1):
        if coverage(n, k) >= level:
            best = k
        else:
            break
    if best is None:
        return None
    return ordered[best - 1], ordered[n - best]


@dataclass(frozen=True)
class Paired:
    median_ms: float
    low_ms: float | None
    high_ms: float | None
    level: float
    bound_ms: float
    """min(50 ms, 10 % of the bare median): the most corral may add in this row."""

    @property
    def verdict(self) -> str:
        if self.low_ms is None or self.high_ms is None:
            return "undecided"
        if self.high_ms <= self.bound_ms:
            return "shown met"
        if self.low_ms > self.bound_ms:
            return "shown missed"
        return "undecided"

    def text(self) -> str:
        """``+12 [−5, +31] ms, shown met`` (the interval at the level this row was built with)."""
        if self.low_ms is None or self.high_ms is None:
            return f"{self.median_ms:+.0f} ms, too few rounds for {self.level:.0%}"
        return f"{self.median_ms:+.0f} [{self.low_ms:+.0f}, {self.high_ms:+.0f}] ms, {self.verdict}"


def paired(bare: Sequence[float], ours: Sequence[float], level: float = 0.9) -> Paired:
    """The per-round differences of two alternating series of seconds, in milliseconds."""
    if len(bare) != len(ours) or not bare:
        raise ValueError(f"{len(bare)} bare and {len(ours)} corral rounds do not pair up")
    diffs = [(o - b) * 1000 for b, o in zip(bare, ours, strict=True)]
    interval = median_interval(diffs, level)
    bound = min(GOAL_ADDED_MS, (GOAL_RATIO - 1.0) * statistics.median(bare) * 1000)
    low, high = interval if interval is not None else (None, None)
    return Paired(statistics.median(diffs), low, high, level, bound)
