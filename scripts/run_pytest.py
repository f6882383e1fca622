"""Run pytest and refuse to pass when it collected or ran nothing.

pytest exits 5 when no test was collected; a green run that ran no test hides a broken suite,
so that case (and an all-skipped run under CI) is turned into a failure here.
"""

from __future__ import annotations

import os
import sys

import pytest


class _Counter:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.passed:
            self.passed += 1
        elif report.failed:
            self.failed += 1
        elif report.skipped:
            self.skipped += 1


def main(argv: list[str]) -> int:
    counter = _Counter()
    code = pytest.main(argv, plugins=[counter])
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("run_pytest: no tests were collected; failing.", file=sys.stderr)
        return 1
    if code == 0 and counter.passed == 0:
        print("run_pytest: every test was skipped; failing.", file=sys.stderr)
        return 1
    if os.environ.get("CI") == "true" and counter.skipped and code == 0:
        print(f"run_pytest: {counter.skipped} skipped under CI=true (see -ra summary).")
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
