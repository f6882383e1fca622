"""The paired rounds of ``bench_overhead``: the interval for the median and what a run shows."""

from __future__ import annotations

import math
import random

import pytest
from benchmarks._overhead_docs import overhead_block
from benchmarks._paired import coverage, median_interval, paired


def test_coverage_is_the_binomial_one() -> None:
    assert coverage(5, 1) == pytest.approx(1 - 2 / 32)
    assert coverage(7, 2) == pytest.approx(1 - 2 * 8 / 128)
    assert coverage(15, 4) == pytest.approx(1 - 2 * (1 + 15 + 105 + 455) / 2**15)
    with pytest.raises(ValueError):
        coverage(5, 4)


def test_the_interval_is_the_widest_k_that_keeps_the_level() -> None:
    values = [float(v) for v in range(1, 16)]  # 15 rounds: k = 4 (96.5 %), k = 5 is 88 %
    assert median_interval(values, 0.9) == (4.0, 12.0)
    assert median_interval(values[:5], 0.9) == (1.0, 5.0)
    assert median_interval(values[:4], 0.9) is None  # 87.5 % at best


def test_the_interval_holds_the_median_as_often_as_it_says() -> None:
    # A skewed noise (exponential, as a slow round is slower by more than a fast one is faster),
    # whose median is known: ln 2.
    rng = random.Random(20)
    n, trials, hits = 9, 4000, 0
    for _ in range(trials):
        low, high = median_interval([rng.expovariate(1.0) for _ in range(n)], 0.9) or (0.0, 0.0)
        hits += low <= math.log(2) <= high
    k = 2  # for n = 9: coverage(9, 2) = 96.1 %, coverage(9, 3) = 82 %
    assert median_interval([float(v) for v in range(9)], 0.9) == (k - 1, 9 - k)
    assert abs(hits / trials - coverage(9, k)) < 0.02


@pytest.mark.parametrize(
    ("bare", "ours", "verdict"),
    [
        ([1.0] * 5, [1.01, 1.02, 1.03, 1.04, 1.045], "shown met"),
        ([1.0] * 5, [1.06, 1.07, 1.08, 1.2, 1.3], "shown missed"),
        ([1.0] * 5, [0.9, 1.0, 1.03, 1.2, 1.3], "undecided"),
        ([1.0] * 4, [1.01] * 4, "undecided"),  # no interval at 90 % from four rounds
        ([0.2] * 5, [0.225] * 5, "shown missed"),  # +25 ms on 0.2 s is past ×1.10
    ],
)
def test_what_a_run_shows(bare: list[float], ours: list[float], verdict: str) -> None:
    assert paired(bare, ours).verdict == verdict


def test_rounds_are_paired_by_position() -> None:
    # Slow and fast rounds hit both sides: the medians' difference is 0, each round adds 30 ms.
    bare = [1.0, 2.0, 1.5, 3.0, 0.8]
    ours = [b + 0.03 for b in bare]
    result = paired(bare, ours)
    assert result.median_ms == pytest.approx(30.0)
    assert (result.low_ms, result.high_ms) == (pytest.approx(30.0), pytest.approx(30.0))
    assert result.bound_ms == pytest.approx(50.0)
    assert result.text() == "+30 [+30, +30] ms, shown met"
    with pytest.raises(ValueError):
        paired(bare, ours[:-1])


def test_the_block_carries_the_paired_row() -> None:
    row = {"adapter": "pi", "ratio": 1.0, "added_ms": 0.0, "failed_runs": 0}
    row["paired"] = paired([1.0] * 5, [1.01] * 5)
    block = overhead_block([row], 5, (0.1, 0.2, 0.3))
    line = next(x for x in block.splitlines() if x.startswith("| added ms per round, paired"))
    assert line.endswith("| +10 [+10, +10] ms, shown met |")
