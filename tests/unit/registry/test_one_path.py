"""One path from an id to a class: a drop-in and an entry-point adapter run everywhere a built-in does.

Each third-party adapter is found by ``corral run``, ``corral chat``, the sessions API and ``corral
conformance`` through the registry, with no caller-specific lookup. The entry point is a real one:
a ``*.dist-info`` with ``entry_points.txt`` on ``sys.path`` (``PYTHONPATH`` for subprocesses), read
by ``importlib.metadata`` exactly as an installed package's would be.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

from corral.cli import build_app
from corral.cli._common import run_guarded
from corral.events import TextComplete
from corral.registry import Registry
from corral.server import Settings, create_app

REFERENCE_SOURCE = (Path(__file__).parents[1] / "conformance" / "_reference_adapter.py").read_text()

ECHO_DROPIN = """
from corral.testing.scripted_adapter import ScriptedAdapter


class EchoAdapter(ScriptedAdapter):
    agent_id = "echo"
    display_name = "Echo (drop-in)"
"""

PLUGIN_INIT = """
from corral.testing.scripted_adapter import ScriptedAdapter


class EchoEntryPoint(ScriptedAdapter):
    agent_id = "echo-ep"
    display_name = "Echo (entry point)"


def register_adapters(register):
    register(EchoEntryPoint)
    # a lazy reference: imported only when the class is first needed
    register("corral_seams_plugin.reference:ReferenceAdapter", agent_id="reference-ep")
"""

IDS = ["echo", "echo-ep"]


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    package = site / "corral_seams_plugin"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(PLUGIN_INIT))
    (package / "reference.py").write_text(
        REFERENCE_SOURCE.replace('agent_id = "reference"', 'agent_id = "reference-ep"')
    )
    dist = site / "corral_seams_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: corral-seams-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[corral.adapters]\nseams = corral_seams_plugin:register_adapters\n"
    )
    return site


@pytest.fixture(autouse=True)
def third_party(corral_home: Path, plugin_site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A drop-in in the corral home and the entry-point package importable."""
    ext = corral_home / "ext_adapters"
    ext.mkdir(parents=True)
    (ext / "echo.py").write_text(textwrap.dedent(ECHO_DROPIN))
    (ext / "reference.py").write_text(
        REFERENCE_SOURCE.replace('agent_id = "reference"', 'agent_id = "reference-dropin"')
    )
    monkeypatch.syspath_prepend(str(plugin_site))
    monkeypatch.delenv("CORRAL_EXTRA_ADAPTERS", raising=False)
    return plugin_site


def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["corral", *args])
    code = run_guarded(build_app())
    out, err = capsys.readouterr()
    return code, out, err


def test_the_registry_lists_both_as_runnable_with_their_class_capabilities() -> None:
    registry = Registry()
    assert registry.get("echo").source == "dropin"
    assert registry.get("echo-ep").source == "entry-point"
    assert registry.get("reference-ep").source == "entry-point"
    for adapter_id in [*IDS, "reference-ep", "reference-dropin"]:
        assert registry.runnable(adapter_id).runnable, adapter_id
        caps, source = registry.capabilities(adapter_id)
        assert source == "adapter-class"
        assert caps == registry.resolve(adapter_id).capabilities()
    assert registry.resolve("reference-ep").__module__ == "corral_seams_plugin.reference"
    assert registry.problems == []


@pytest.mark.parametrize("adapter_id", IDS)
def test_corral_run(
    adapter_id: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = cli(capsys, monkeypatch, "run", adapter_id, "hi")
    assert code == 0, err
    assert "echo: hi" in out


@pytest.mark.parametrize("adapter_id", IDS)
def test_adapters_list_json_marks_them_runnable(
    adapter_id: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = cli(capsys, monkeypatch, "adapters", "list", "--json")
    assert code == 0
    row = {r["id"]: r for r in json.loads(out)["adapters"]}[adapter_id]
    assert row["runnable"] is True
    assert row["source"] in ("dropin", "entry-point")
    assert "cancel" in row["capabilities"]


@pytest.mark.parametrize("adapter_id", IDS)
def test_corral_chat(adapter_id: str, corral_home: Path, third_party: Path) -> None:
    env = {**os.environ, "CORRAL_HOME": str(corral_home), "PYTHONPATH": str(third_party)}
    env.pop("CORRAL_EXTRA_ADAPTERS", None)
    argv = [sys.executable, "-c", "from corral.cli import main; main()", "chat", adapter_id]
    proc = subprocess.Popen(
        [*argv, "--db", str(corral_home / "chat.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"hello\n")
        proc.stdin.flush()
        seen = b""
        while b"echo: hello" not in seen:
            ready, _, _ = select.select([proc.stdout], [], [], 20)
            assert ready, seen.decode(errors="replace")
            chunk = os.read(proc.stdout.fileno(), 4096)
            assert chunk, seen.decode(errors="replace")
            seen += chunk
        proc.stdin.write(b"/quit\n")
        proc.stdin.flush()
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stdin.close()


@pytest.mark.parametrize("adapter_id", IDS)
async def test_sessions_api(adapter_id: str, tmp_path: Path) -> None:
    # the default resolver: nothing passed in, so the service resolves through the registry
    app = create_app(Settings(db_path=tmp_path / "corral.db", token="t"))
    headers = {"Authorization": "Bearer t", "Content-Type": "application/json"}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1", headers=headers
        ) as client:
            r = await client.post("/api/sessions", json={"adapter_id": adapter_id})
            assert r.status_code == 201, r.text
            sid = r.json()["id"]
            manager: Any = app.state.manager

            async def reply() -> str:
                async for env in manager.subscribe(sid):
                    if isinstance(env.event, TextComplete):
                        return str(env.event.text)
                raise AssertionError("stream ended")

            waiter = asyncio.create_task(reply())
            sent = await client.post(f"/api/sessions/{sid}/prompts", json={"text": "hi"})
            assert sent.status_code in (200, 201), sent.text
            assert await asyncio.wait_for(waiter, 10) == "echo: hi"
            await client.post(f"/api/sessions/{sid}/kill")


@pytest.mark.parametrize("adapter_id", ["reference-dropin", "reference-ep"])
def test_corral_conformance(
    adapter_id: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = cli(
        capsys, monkeypatch, "conformance", adapter_id, "-s", "text", "-s", "tool-write", "--json"
    )
    results = {r["scenario"]: r for r in json.loads(out)["results"]}
    assert results["text"]["outcome"] == "pass", results
    assert results["tool-write"]["outcome"] == "pass", results
    assert {r["agent"] for r in results.values()} == {adapter_id}
    assert code == 0, err


def test_conformance_on_a_listed_adapter_that_cannot_run_says_why(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = cli(capsys, monkeypatch, "conformance", "cursor", "-s", "text", "--json")
    assert code == 1
    assert "cannot run" in json.loads(out)["missing"]["cursor"]


async def test_sessions_api_refuses_a_listed_adapter_that_cannot_run(tmp_path: Path) -> None:
    app = create_app(Settings(db_path=tmp_path / "corral.db", token="t"))
    headers = {"Authorization": "Bearer t", "Content-Type": "application/json"}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1", headers=headers
        ) as client:
            r = await client.post("/api/sessions", json={"adapter_id": "amp"})
            assert r.status_code == 404, r.text
            assert "'amp' is listed but cannot run" in r.json()["error"]
            assert (await client.get("/api/sessions")).json() == []  # nothing was stored


def test_adapters_show_says_why_it_cannot_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = cli(capsys, monkeypatch, "adapters", "show", "droid", "--json")
    assert code == 0
    info = json.loads(out)
    assert (info["runnable"], info["adapterClass"], info["capabilities"]) == (False, None, [])
    assert "not pinned" in info["notRunnableReason"]
