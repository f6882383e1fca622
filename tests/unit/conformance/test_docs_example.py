"""The worked example of docs/testing.md runs as written: the adapter it shows loads as a drop-in,
passes the conformance scenarios the page says it passes (through the registry and through the
``corral conformance`` command), and the pytest module it shows passes.

The code is taken from the page (each block follows an ``<!-- example: FILE -->`` marker), so the
page cannot drift from what works."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from corral.cli import build_app
from corral.cli._common import run_guarded
from corral.registry import Registry
from corral.testing import FakeModelServer
from corral.testing.conformance import Outcome, builtin_targets, run_conformance

PAGE = Path(__file__).resolve().parents[3] / "docs" / "testing.md"
BLOCK = re.compile(r"<!-- example: (?P<file>[\w.]+) -->\s*```python\n(?P<code>.*?)\n```", re.S)
PASSES = ["text", "tool-write", "follow-up", "usage"]


def examples() -> dict[str, str]:
    return {m["file"]: m["code"] + "\n" for m in BLOCK.finditer(PAGE.read_text("utf-8"))}


@pytest.fixture
def dropin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The page's adapter file as a drop-in, in a fresh corral home."""
    folder = tmp_path / "ext_adapters"
    folder.mkdir()
    (folder / "hello_agent.py").write_text(examples()["hello_agent.py"])
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CORRAL_EXT_ADAPTERS_DIR", str(folder))
    return folder


def test_the_page_has_the_example_files() -> None:
    assert set(examples()) == {"hello_agent.py", "test_hello.py"}


async def test_the_dropin_passes_the_scenarios_the_page_names(dropin: Path) -> None:
    registry = Registry()
    assert registry.resolve("hello").agent_id == "hello"
    targets, missing = builtin_targets(["hello"], registry)
    assert missing == {}
    async with FakeModelServer() as server:
        results = await run_conformance(targets, PASSES, server=server)
    assert [(r.scenario, r.outcome) for r in results] == [(n, Outcome.PASS) for n in PASSES], [
        r.reason for r in results
    ]


def test_corral_conformance_runs_the_dropin(
    dropin: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["corral", "conformance", "hello", *(a for n in PASSES for a in ("-s", n))]
    monkeypatch.setattr(sys, "argv", argv)
    assert run_guarded(build_app()) == 0
    out = capsys.readouterr().out
    assert all(re.search(rf"hello\s+{n}\s+pass", out) for n in PASSES), out


async def test_the_pages_pytest_module_passes(
    dropin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "test_hello.py").write_text(examples()["test_hello.py"])
    monkeypatch.syspath_prepend(str(dropin))  # `from hello_agent import HelloAdapter`
    spec = importlib.util.spec_from_file_location("docs_test_hello", tmp_path / "test_hello.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    await module.test_conformance()
    sys.modules.pop("hello_agent", None)
