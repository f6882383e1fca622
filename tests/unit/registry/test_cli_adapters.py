"""``corral adapters …`` and ``corral schema manifest``: output and documented exit codes.

Most commands run in-process through the same entry point as the ``corral`` script
(``run_guarded(build_app())``); a few run the installed script in a subprocess end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from corral import agents
from corral.adapters import NOT_RUNNABLE
from corral.adapters.claude import ClaudeAdapter
from corral.cli import build_app
from corral.cli._common import run_guarded
from corral.testing import require_agent

CORRAL = Path(sys.executable).with_name("corral")


def run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["corral", *args])
    code = run_guarded(build_app())
    out, err = capsys.readouterr()
    return code, out, err


def run_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, Any]:
    code, out, _ = run(capsys, monkeypatch, *args, "--json")
    return code, json.loads(out)


def _manifest(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "my-agent",
        "displayName": "My Agent",
        "executables": ["my-agent"],
        "launchCommand": "my-agent",
        "supportedPlatforms": ["linux"],
        "supportedApprovalPolicies": ["full"],
        "promptInjection": "stdin",
        "supportsStructured": True,
        "streaming": {
            "preferred": {
                "launchCommand": "my-agent --mode rpc",
                "promptDelivery": "json-rpc",
                "protocol": "pi-rpc",
                "sessionMode": "persistent-session",
                "supportsFollowUp": True,
            }
        },
    }
    data.update(changes)
    return data


FIVE_BROKEN = _manifest(
    id="bad id!",
    launchCommand="",
    executables=[],
    promptInjection="telepathy",
    supportedPlatforms=["beos"],
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_manifest()))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(FIVE_BROKEN))
    return {"good": good, "bad": bad, "missing": tmp_path / "nope.json"}


def test_list_json_has_builtins_with_protocol_and_capabilities(capsys, monkeypatch) -> None:
    code, data = run_json(capsys, monkeypatch, "adapters", "list")
    assert code == 0
    rows = {r["id"]: r for r in data["adapters"]}
    builtins = [r for r in rows.values() if r["source"] == "builtin"]
    assert len(builtins) >= 12
    assert rows["claude-code"]["protocol"] == "claude-stream-json"
    assert rows["claude-code"]["promptDelivery"] == "stdin"
    # Capabilities of a runnable adapter are its class's cap_* flags (what real-CLI runs check).
    assert rows["claude-code"]["capabilities"] == ClaudeAdapter.capabilities().enabled()
    assert rows["claude-code"]["capabilitySource"] == "adapter-class"
    assert rows["claude-code"]["runnable"] is True
    assert "attached_terminal" in rows["opencode"]["capabilities"]
    assert rows["cursor"]["protocol"] is None
    assert data["problems"] == []


def test_list_json_marks_every_manifest_without_a_driver_and_shows_it_no_capability(
    capsys, monkeypatch
) -> None:
    code, data = run_json(capsys, monkeypatch, "adapters", "list")
    assert code == 0
    rows = {r["id"]: r for r in data["adapters"]}
    not_runnable = {i for i, r in rows.items() if not r["runnable"]}
    assert not_runnable == {"amp", "cursor", "droid"}
    for adapter_id in not_runnable:
        row = rows[adapter_id]
        assert row["capabilities"] == [], adapter_id
        assert row["capabilitySource"] == "none"
        assert (
            "no driver class" in row["notRunnableReason"]
            or "no adapter class" in (row["notRunnableReason"])
            or row["notRunnableReason"] == NOT_RUNNABLE[adapter_id]
        )
    # Each listed CLI corral cannot run says why, in its own words (evidence: docs/agents.md).
    assert "Amp server" in rows["amp"]["notRunnableReason"]
    assert "not published" in rows["droid"]["notRunnableReason"]
    assert "own installer" in rows["cursor"]["notRunnableReason"]
    # A plain agent (one process per prompt, no protocol) claims nothing beyond text: an empty
    # list is its honest answer; every other runnable adapter claims what its runs show.
    plain = {i for i, r in rows.items() if str(r["protocol"]).startswith("plain-")}
    assert {"example-plain-argv", "example-plain-stdin", "aider-plain"} <= plain
    for adapter_id in set(rows) - not_runnable:
        assert rows[adapter_id]["notRunnableReason"] is None
        assert rows[adapter_id]["capabilities"] or adapter_id in plain, adapter_id


def test_running_a_listed_adapter_without_a_driver_says_why(capsys, monkeypatch) -> None:
    code, _, err = run(capsys, monkeypatch, "run", "amp", "hi")
    err = " ".join(err.split())
    assert code == 4
    assert "'amp' is listed but cannot run" in err
    assert "Couldn't connect to the Amp server" in err


def test_list_table_for_humans(capsys, monkeypatch) -> None:
    code, out, _ = run(capsys, monkeypatch, "adapters", "list")
    assert code == 0
    assert "claude-code" in out
    assert "pi-rpc" in out


def test_show(capsys, monkeypatch) -> None:
    code, data = run_json(capsys, monkeypatch, "adapters", "show", "hermes")
    assert code == 0
    assert data["protocol"] == "hermes-acp"
    assert data["repairCommand"] == ["pip", "install", "hermes-agent[acp]"]
    assert data["stale"] is True
    assert data["lastVerify"] is None
    assert data["manifest"]["streaming"]["preferred"]["launchCommand"] == "hermes acp"
    code, out, _ = run(capsys, monkeypatch, "adapters", "show", "hermes")
    assert code == 0
    assert "hermes acp" in out


def test_unknown_adapter_exits_4(capsys, monkeypatch) -> None:
    for command in ("show", "probe", "verify", "remove", "detect"):
        code, _, err = run(capsys, monkeypatch, "adapters", command, "no-such-adapter")
        assert code == 4, command
        assert "no-such-adapter" in err


def test_validate_prints_all_five_violations_and_exits_3(capsys, monkeypatch, files) -> None:
    code, _out, err = run(capsys, monkeypatch, "adapters", "validate", str(files["bad"]))
    assert code == 3
    assert "5 violation(s)" in err
    for rule in ("id-charset", "non-empty", "min-one", "prompt-injection", "platform"):
        assert f"[{rule}]" in err
    code, data = run_json(capsys, monkeypatch, "adapters", "validate", str(files["bad"]))
    assert code == 3
    assert data["valid"] is False
    assert [(v["path"], v["rule"]) for v in data["violations"]] == [
        ("id", "id-charset"),
        ("launchCommand", "non-empty"),
        ("executables", "min-one"),
        ("supportedPlatforms[0]", "platform"),
        ("promptInjection", "prompt-injection"),
    ]


def test_validate_valid_exits_0(capsys, monkeypatch, files) -> None:
    code, data = run_json(capsys, monkeypatch, "adapters", "validate", str(files["good"]))
    assert (code, data["valid"], data["violations"]) == (0, True, [])


def test_validate_bad_input(capsys, monkeypatch, files, tmp_path) -> None:
    code, _, err = run(capsys, monkeypatch, "adapters", "validate", str(files["missing"]))
    assert code == 2
    assert "cannot read" in err
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    code, data = run_json(capsys, monkeypatch, "adapters", "validate", str(broken))
    assert code == 3
    assert data["violations"][0]["rule"] == "json-syntax"


def test_add_then_remove(capsys, monkeypatch, files, corral_home) -> None:
    code, data = run_json(capsys, monkeypatch, "adapters", "add", str(files["good"]))
    assert code == 0
    assert Path(data["path"]) == corral_home / "adapters" / "my-agent.json"
    code, listed = run_json(capsys, monkeypatch, "adapters", "list")
    assert {r["id"]: r["source"] for r in listed["adapters"]}["my-agent"] == "custom"
    code, _, _ = run(capsys, monkeypatch, "adapters", "add", str(files["good"]))
    assert code == 3  # already there without --replace
    code, _, _ = run(capsys, monkeypatch, "adapters", "add", str(files["good"]), "--replace")
    assert code == 0
    code, data = run_json(capsys, monkeypatch, "adapters", "remove", "my-agent")
    assert (code, data["removed"]) == (0, "my-agent")
    assert not (corral_home / "adapters" / "my-agent.json").exists()


def test_add_rejects_builtin_id_and_invalid(capsys, monkeypatch, files, tmp_path) -> None:
    clash = tmp_path / "clash.json"
    clash.write_text(json.dumps(_manifest(id="codex")))
    code, data = run_json(capsys, monkeypatch, "adapters", "add", str(clash))
    assert code == 3
    assert data["violations"][0]["rule"] == "id-available"
    code, data = run_json(capsys, monkeypatch, "adapters", "add", str(files["bad"]))
    assert code == 3
    assert len(data["violations"]) == 5


def test_remove_builtin_is_bad_input(capsys, monkeypatch) -> None:
    code, _, err = run(capsys, monkeypatch, "adapters", "remove", "claude-code")
    assert code == 2
    assert "builtin" in err


def test_detect_probe_verify_on_the_example_adapters(capsys, monkeypatch) -> None:
    code, data = run_json(
        capsys, monkeypatch, "adapters", "detect", "example-plain-stdin", "example-plain-argv"
    )
    assert code == 0
    assert [d["status"] for d in data] == ["installed", "installed"]
    assert all(d["version"] for d in data)
    code, data = run_json(capsys, monkeypatch, "adapters", "probe", "example-plain-stdin")
    assert (code, data["ok"], data["step"]) == (0, True, "probe")
    code, data = run_json(
        capsys, monkeypatch, "adapters", "verify", "example-plain-stdin", "--settle", "0.3"
    )
    assert (code, data["ok"], data["attempts"]) == (0, True, 1)
    code, shown = run_json(capsys, monkeypatch, "adapters", "show", "example-plain-stdin")
    assert shown["stale"] is False
    assert shown["lastVerify"]["ok"] is True


def test_detect_missing_named_adapter_exits_1(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CORRAL_CACHE_DIR", str(tmp_path / "cache"))
    code, data = run_json(capsys, monkeypatch, "adapters", "detect", "codex")
    assert code == 1
    assert data == [
        {
            "adapter_id": "codex",
            "status": "missing",
            "executable": None,
            "path": None,
            "source": None,
            "version": None,
            "error": None,
            "repair": ["npm", "install", "-g", "@openai/codex"],
        }
    ]
    code, out, _ = run(capsys, monkeypatch, "adapters", "probe", "codex")
    assert code == 1
    assert "FAILED" in out


def test_schema_manifest(capsys, monkeypatch) -> None:
    code, out, _ = run(capsys, monkeypatch, "schema", "manifest")
    assert code == 0
    schema = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert jsonschema.Draft202012Validator(schema).is_valid(_manifest())
    assert not jsonschema.Draft202012Validator(schema).is_valid(FIVE_BROKEN)


# ── the installed script, end to end ──


def _corral(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CORRAL), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_script_validate_exit_codes(files) -> None:
    env = dict(os.environ)
    bad = _corral("adapters", "validate", str(files["bad"]), env=env)
    assert bad.returncode == 3
    assert bad.stderr.count("[") >= 5
    good = _corral("adapters", "validate", str(files["good"]), env=env)
    assert good.returncode == 0


def test_script_detects_pinned_claude_on_path(tmp_path: Path) -> None:
    bin_dir = require_agent("claude", pinned_only=True).parent
    env = {**os.environ, "PATH": str(bin_dir), "CORRAL_CACHE_DIR": str(tmp_path / "empty")}
    result = _corral("adapters", "detect", "claude-code", "codex", "--json", env=env)
    by_id = {d["adapter_id"]: d for d in json.loads(result.stdout)}
    assert by_id["claude-code"]["status"] == "installed"
    assert by_id["claude-code"]["version"] == agents.get_pin("claude").version
    assert by_id["claude-code"]["path"] == str(bin_dir / "claude")
    assert by_id["codex"]["status"] == "missing"
    assert result.returncode == 1  # codex was asked for and is missing


def test_list_reports_skipped_dropins(capsys, monkeypatch, tmp_path) -> None:
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "broken.py").write_text("def oops(:\n")
    monkeypatch.setenv("CORRAL_EXT_ADAPTERS_DIR", str(ext))
    code, data = run_json(capsys, monkeypatch, "adapters", "list")
    assert code == 0
    assert [Path(p["origin"]).name for p in data["problems"]] == ["broken.py"]
    assert "SyntaxError" in data["problems"][0]["message"]
    code, _, err = run(capsys, monkeypatch, "adapters", "list")
    assert code == 0
    assert "skipped" in err
    assert "broken.py" in err
