"""``import corral``, ``import corral.cli`` and ``corral --help|--version`` stay light.

A test of what gets imported (never of time): the CLI's start-up must not load the asyncio stack,
the HTTP client or server, the event codec, the console renderer or any command module. See
docs/performance.md for the timings this protects.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "asyncio",
    "httpx",
    "starlette",
    "uvicorn",
    "anyio",
    "msgspec",
    "pydantic",
    "rich",
    "sqlite3",
)


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def _command_modules(modules: list[str]) -> list[str]:
    return sorted(
        m for m in modules if m.startswith("corral.cli.") and not m.split(".")[2].startswith("_")
    )


@pytest.mark.parametrize("statement", ["import corral", "import corral.cli"])
def test_import_loads_nothing_heavy(statement: str) -> None:
    code = f"{statement}; import json, sys; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    modules = json.loads(proc.stdout)
    assert _heavy(modules) == []
    assert _command_modules(modules) == []


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_root_flags_load_nothing_heavy(flag: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "corral", flag],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = [
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    assert "corral.cli" in modules  # the listing really is of this run
    assert _heavy(modules) == []
    assert _command_modules(modules) == []
    # printed from data: neither Typer nor its vendored click is imported
    assert [m for m in modules if m.split(".")[0] in ("typer", "click")] == []


def test_public_names_still_resolve_on_use() -> None:
    code = "import corral, sys; corral.BaseAdapter; print('asyncio' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == "True"  # the lazy name really loads its module
