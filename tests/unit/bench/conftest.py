"""The benchmarks' pure helpers are tested here: ``benchmarks`` is a package at the repository's
root, which pytest does not put on ``sys.path`` under ``scripts/run_pytest.py``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[3])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
