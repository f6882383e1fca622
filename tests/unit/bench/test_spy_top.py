"""spy_top: a py-spy raw profile summed per thread, by a function's own and inclusive samples."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks.spy_top import main, read

PROFILE = [
    "thread (0x1): MainThread;run (asyncio/runners.py:118);send (uvicorn/h.py:540) 6\n",
    "thread (0x1): MainThread;run (asyncio/runners.py:118);emit (corral/m.py:10);"
    "send (uvicorn/h.py:541) 3\n",
    "thread (0x1): MainThread;run (asyncio/runners.py:118) 1\n",
    "thread (0x2): Thread-1;_commit (corral/w.py:5) 4\n",
    "not a profile line\n",
]


def test_samples_are_summed_per_thread_and_function_lines_apart() -> None:
    top = read(PROFILE, "main")
    assert top.samples == {"main": 10, "others": 4}
    # two lines of ``send`` are one function; the frame at the top owns the sample
    assert top.own == {"send uvicorn/h": 9, "run asyncio/runners": 1}
    assert top.anywhere["run asyncio/runners"] == 10
    assert top.anywhere["emit corral/m"] == 3
    assert "_commit corral/w" not in top.anywhere
    assert read(PROFILE, "others").own == {"_commit corral/w": 4}


def test_main_prints_shares_and_fails_on_a_thread_without_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spy.txt"
    path.write_text("".join(PROFILE[:3]))
    assert main([str(path), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert " 90.0%  send uvicorn/h" in out
    assert "100.0%  run asyncio/runners" in out
    assert main([str(path), "--thread", "others"]) == 1
