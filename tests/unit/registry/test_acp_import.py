"""ACP registry entries (real copies in tests/fixtures/acp_registry) → custom manifests.

The entries were fetched from the public ACP registry repository (commit in the fixtures' README);
the tests check what each becomes, that the registry runs it through the shared ACP driver, and
that malformed entries are refused with a message naming the problem.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.acp_manifest import ManifestAcpAdapter, acp_class_for
from corral.cli import build_app
from corral.cli._acp_import import import_entries, read_entries
from corral.cli._common import run_guarded
from corral.errors import ConfigError
from corral.manifests import parse_manifest
from corral.manifests._acp_registry import convert, split_package
from corral.registry import Registry
from corral.testing.conformance._targets import builtin_targets, pinned_spec

FIXTURES = Path(__file__).parents[2] / "fixtures" / "acp_registry"


def _entry(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name / "agent.json").read_text("utf-8"))
    return data


def test_an_npx_entry_becomes_an_acp_manifest_with_its_package() -> None:
    converted = convert(_entry("qwen-code"), bins_for={"@qwen-code/qwen-code": ["qwen"]})
    manifest = parse_manifest(converted.manifest)
    assert manifest.id == "acp.qwen-code"
    assert manifest.display_name == "Qwen Code"
    assert manifest.executables == ["qwen"]
    assert manifest.install is not None and manifest.install.npm == "@qwen-code/qwen-code"
    profile = manifest.structured
    assert profile is not None
    assert (profile.protocol, profile.launch_command) == ("acp", "qwen --acp --experimental-skills")
    assert converted.package is not None and converted.package.version == "0.9.1"


def test_a_binary_entry_names_the_command_and_the_platforms_it_ships_for() -> None:
    converted = convert(_entry("opencode"))
    manifest = parse_manifest(converted.manifest)
    assert manifest.executables == ["opencode"]
    assert manifest.structured is not None
    assert manifest.structured.launch_command == "opencode acp"
    assert sorted(manifest.supported_platforms) == ["linux", "macos", "windows"]
    assert converted.package is None
    droid = convert(_entry("factory-droid"))
    assert droid.manifest["streaming"]["preferred"]["launchCommand"] == (
        "droid exec --output-format acp"
    )
    assert any("DROID_DISABLE_AUTO_UPDATE" in note for note in droid.notes)


def test_without_a_known_bin_the_package_name_is_the_executable() -> None:
    converted = convert(_entry("github-copilot"))
    assert converted.manifest["executables"] == ["copilot-language-server"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("@google/gemini-cli@0.27.3", ("@google/gemini-cli", "0.27.3")),
        ("@scope/pkg", ("@scope/pkg", None)),
        ("plain@1.0", ("plain", "1.0")),
        ("hermes-agent==0.19.0", ("hermes-agent", "0.19.0")),
    ],
)
def test_split_package(spec: str, expected: tuple[str, str | None]) -> None:
    assert split_package(spec) == expected


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ([], "not a JSON object"),
        ({"name": "x", "distribution": {"npx": {"package": "x"}}}, "'id'"),
        ({"id": "x", "name": "X"}, "'distribution'"),
        ({"id": "x", "name": "X", "distribution": {"docker": {}}}, "has: docker"),
        (
            {"id": "x", "name": "X", "distribution": {"npx": {"package": "x", "args": "--acp"}}},
            "args must be a list",
        ),
        ({"id": "x", "name": "X", "distribution": {"binary": {"linux-x86_64": 3}}}, "not an obj"),
    ],
)
def test_malformed_entries_are_refused_by_name(entry: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        convert(entry)


def test_the_shared_acp_driver_runs_a_custom_acp_manifest() -> None:
    manifest = parse_manifest(convert(_entry("gemini"), bins_for={}).manifest)
    cls = acp_class_for(manifest)
    assert issubclass(cls, ManifestAcpAdapter)
    assert (cls.agent_id, cls.cli_binary, cls.acp_args) == (
        "acp.gemini",
        "gemini-cli",
        ("--experimental-acp",),
    )
    # claims nothing no run of that agent showed
    caps = cls.capabilities()
    assert not any(getattr(caps, name) for name in caps.__struct_fields__)


def test_import_writes_runnable_custom_manifests_mapped_to_the_pins() -> None:
    registry = Registry()
    results = {r.id: r for r in import_entries(FIXTURES, install=False, registry=registry)}
    assert set(results) == {
        "acp.gemini",
        "acp.qwen-code",
        "acp.opencode",
        "acp.github-copilot",
        "acp.factory-droid",
    }
    assert (results["acp.gemini"].pin, results["acp.qwen-code"].pin) == ("gemini", "qwen")
    assert results["acp.opencode"].pin == "opencode"  # a binary entry whose command is a pin's
    assert results["acp.github-copilot"].pin is None
    assert any("not pinned" in n for n in results["acp.github-copilot"].notes)
    assert all(r.runnable and not r.installed for r in results.values())
    fresh = Registry()
    assert fresh.get("acp.gemini").source == "custom"
    assert fresh.resolve("acp.gemini").acp_args == ("--experimental-acp",)
    # importing again replaces the same manifests instead of refusing them
    assert len(import_entries(FIXTURES / "gemini" / "agent.json", install=False)) == 1


def test_imported_pinned_agents_are_conformance_targets_with_the_pins_redirection() -> None:
    import_entries(FIXTURES, install=False)
    registry = Registry()
    spec = pinned_spec("acp.qwen-code", registry)
    assert spec is not None and (spec.adapter, spec.redirect) == ("acp.qwen-code", "qwen")
    assert pinned_spec("acp.github-copilot", registry) is None
    targets, missing = builtin_targets(["acp.opencode"], registry)
    assert not missing and targets[0].agent == "acp.opencode"


def test_a_registry_index_and_stray_json_in_a_directory(tmp_path: Path) -> None:
    index = {"version": "1.0.0", "agents": [_entry("gemini"), _entry("opencode")]}
    (tmp_path / "registry.json").write_text(json.dumps(index), "utf-8")
    (tmp_path / "schema.json").write_text('{"type": "object"}', "utf-8")
    assert [e["id"] for _, e in read_entries(tmp_path)] == ["gemini", "opencode"]
    with pytest.raises(ConfigError, match="neither"):
        read_entries(tmp_path / "schema.json")
    with pytest.raises(ConfigError, match="no such file"):
        read_entries(tmp_path / "missing")


def test_the_cli_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["corral", "adapters", "import-acp", str(FIXTURES / "qwen-code"), "--no-install"]
    monkeypatch.setattr(sys, "argv", [*args, "--json"])
    assert run_guarded(build_app()) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in out["imported"]] == ["acp.qwen-code"]
    monkeypatch.setattr(sys, "argv", ["corral", "adapters", "import-acp", "/nonexistent"])
    assert run_guarded(build_app()) != 0
    assert "no such file" in capsys.readouterr().err


def test_the_compatibility_page_lists_imported_agents_and_what_cannot_run() -> None:
    from corral.cli.conformance import _registry_sections
    from corral.testing.conformance import ScenarioResult
    from corral.testing.conformance._types import Outcome

    import_entries(FIXTURES / "qwen-code", install=False)
    results = [
        ScenarioResult(agent="acp.qwen-code", scenario="text", outcome=Outcome.PASS),
        ScenarioResult(agent="acp.qwen-code", scenario="usage", outcome=Outcome.PASS),
        ScenarioResult(agent="claude", scenario="text", outcome=Outcome.PASS),
    ]
    page = _registry_sections(results)
    assert "`acp.qwen-code`: registry entry `qwen-code` 0.9.1" in page
    assert "verified here (2 pass, 0 fail)" in page
    assert "claude" not in page.split("## Listed but not runnable")[0]
    blocked = page.split("## Listed but not runnable")[1]
    assert "`amp`:" in blocked and "`cursor`:" in blocked and "`droid`:" in blocked
    failed = [ScenarioResult(agent="acp.qwen-code", scenario="text", outcome=Outcome.FAIL)]
    assert "not verified (0 pass, 1 fail)" in _registry_sections(failed)
