"""A usage error is a message and exit code 2, never a traceback (typer's vendored click included)."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "argv",
    [
        ["nosuch"],
        ["run", "claude-code", "hi", "--no-such-option"],
        ["sessions", "list", "--port", "abc"],
    ],
)
def test_usage_error_exits_2_without_traceback(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "corral", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Error:" in proc.stderr
