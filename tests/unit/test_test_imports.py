"""Test modules import each other as pytest's rootdir makes them importable, never as ``tests.…``.

``tests`` is not a package: ``from tests.x import y`` works only when the repository root happens
to be on ``sys.path`` (``python -m pytest`` from the root), and fails under ``make test``, which
runs ``scripts/run_pytest.py`` on two xdist workers. A clean-clone CI run found it twice.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# Run as a script in a child process from the repository root (see tests/unit/faults).
SCRIPTS = {TESTS / "unit" / "faults" / "_isolated.py"}


def test_no_test_module_imports_the_tests_directory_as_a_package() -> None:
    pattern = re.compile(r"^\s*(from|import)\s+tests(\.|\s|$)", re.MULTILINE)
    offenders = [
        str(p.relative_to(TESTS))
        for p in TESTS.rglob("*.py")
        if p not in SCRIPTS and pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    assert len(list(TESTS.rglob("*.py"))) > 100  # the scan really read the suite
