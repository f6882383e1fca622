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


def _modules_after(statement: str) -> list[str]:
    """Every module loaded in a fresh interpreter once ``statement`` has run."""
    code = f"{statement}; import json, sys; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return list(json.loads(proc.stdout))


@pytest.mark.parametrize("statement", ["import corral", "import corral.cli"])
def test_import_loads_nothing_heavy(statement: str) -> None:
    modules = _modules_after(statement)
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


def test_the_writers_child_loads_no_manager() -> None:
    """The database writer's child process (decision 051) imports its own module and the store's
    and queue's operations; the sessions package no longer drags in the manager, the hub or the
    adapters' resolver with them."""
    modules = _modules_after(
        "import corral.sessions._writer_process, corral.sessions._store, corral.sessions._queue"
    )
    assert "corral.sessions._writer_process" in modules  # the listing really is of this run
    loaded = [
        m for m in ("_manager", "_hub", "_resolve", "_runner") if f"corral.sessions.{m}" in modules
    ]
    assert loaded == []


def test_the_sessions_names_still_resolve_on_use() -> None:
    code = (
        "import corral.sessions as s, sys; before = 'corral.sessions._manager' in sys.modules;"
        " s.SessionManager; print(before, 'corral.sessions._manager' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.split() == ["False", "True"]  # loaded by the name's first use, not before


def test_the_service_starts_without_the_http_client() -> None:
    """``corral serve`` builds its app without httpx (and the click, rich and pygments its
    package pulls in): the attention webhook loads it at its first post."""
    modules = _modules_after("import corral.server._app, corral.server._run")
    assert "corral.server._webhook" in modules  # the listing really is of the service's app
    assert [m for m in modules if m.split(".")[0] in ("httpx", "pygments", "rich")] == []
