"""The registry: built-ins, custom manifests, drop-in and entry-point adapters, the driver seam."""

from __future__ import annotations

import json
import logging
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from corral.adapters.base import BaseAdapter
from corral.adapters.claude import ClaudeAdapter
from corral.errors import AdapterContractError, AdapterNotFoundError, ConfigError, ManifestError
from corral.manifests import PROTOCOLS, manifest_schema
from corral.registry import DRIVERS_GROUP, Registry, detect_entries, load_builtin_manifests

BUILTIN_IDS = {
    "claude-code",
    "codex",
    "opencode",
    "gemini",
    "qwen",
    "qwen-acp",
    "opencode-acp",
    "pi",
    "hermes",
    "hermes-gateway",
    "kilo",
    "cursor",
    "copilot",
    "droid",
    "amp",
    "example-plain-argv",
    "example-plain-stdin",
    "aider-plain",
    # The shell grade (adapters/shell.py).
    "aider-shell",
    "claude-tui",
    "codex-tui",
}

GOOD_ADAPTER = """
from corral.adapters.base import BaseAdapter
from corral.adapters.claude import ClaudeAdapter

class EchoAdapter(BaseAdapter):
    agent_id = "echo-dropin"
    display_name = "Echo"
    cli_binary = "echo"
    cap_cancel = True
    provides_models = False
    provides_usage = False

    async def start(self, session_id):
        return self.make_agent_info()

    async def send(self, text, attachments=None):
        pass

    async def stream(self):
        yield None

    async def stop(self):
        pass
"""


def no_entry_points(group: str) -> list[Any]:
    return []


def _write(directory: Path, name: str, source: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(source))
    return path


def _custom(adapter_id: str = "my-agent") -> dict[str, Any]:
    return {
        "id": adapter_id,
        "displayName": "My Agent",
        "executables": ["my-agent"],
        "launchCommand": "my-agent",
        "supportedPlatforms": ["linux"],
        "supportedApprovalPolicies": ["full"],
        "promptInjection": "stdin",
        "supportsStructured": True,
        "streaming": {
            "preferred": {
                "launchCommand": "my-agent --acp",
                "promptDelivery": "json-rpc",
                "protocol": "acp",
                "sessionMode": "persistent-session",
                "supportsFollowUp": True,
            }
        },
    }


# ── built-ins ──


def test_builtins_are_all_there_valid_and_schema_clean() -> None:
    manifests = load_builtin_manifests()
    assert {m.id for m in manifests} == BUILTIN_IDS
    validator = jsonschema.Draft202012Validator(manifest_schema())
    folder = Path(__import__("corral.registry", fromlist=["x"]).__file__).parent / "builtin"
    for path in folder.glob("*.json"):
        assert list(validator.iter_errors(json.loads(path.read_text()))) == [], path.name
    for m in manifests:
        assert m.setup_hint, m.id
        if m.structured is not None:
            assert m.structured.protocol in PROTOCOLS


def test_builtin_protocols_are_faithful() -> None:
    by_id = {m.id: m for m in load_builtin_manifests()}
    expected = {
        "claude-code": "claude-stream-json",
        "codex": "codex-app-server",
        "opencode": "opencode-sse",
        "gemini": "acp",
        "qwen": "claude-stream-json",
        "qwen-acp": "acp",
        "opencode-acp": "acp",
        "pi": "pi-rpc",
        "hermes": "hermes-acp",
        "kilo": "acp",
        "copilot": "acp",
        "droid": "acp",
        "amp": "claude-stream-json",
        "example-plain-argv": "plain-argv",
        "example-plain-stdin": "plain-stdin",
        "aider-plain": "plain-argv",
    }
    for adapter_id, proto in expected.items():
        profile = by_id[adapter_id].structured
        assert profile is not None, adapter_id
        assert profile.protocol == proto
    assert by_id["cursor"].structured is None  # no persistent machine mode: shell grade only


def test_unknown_id_raises_adapter_not_found() -> None:
    registry = Registry(entry_points=no_entry_points)
    with pytest.raises(AdapterNotFoundError) as info:
        registry.get("nope")
    assert info.value.exit_code == 4
    assert "nope" not in registry


# ── custom manifests ──


def test_custom_manifest_add_persists_and_remove(corral_home: Path) -> None:
    registry = Registry(entry_points=no_entry_points)
    registry.add_custom(_custom())
    saved = corral_home / "adapters" / "my-agent.json"
    assert json.loads(saved.read_text())["launchCommand"] == "my-agent"
    again = Registry(entry_points=no_entry_points)
    assert again.get("my-agent").source == "custom"
    # an acp manifest alone runs through the shared ACP driver, claiming no capability
    caps, source = again.capabilities("my-agent")
    assert (caps.enabled(), source) == ([], "adapter-class")
    assert again.runnable("my-agent").runnable is True
    cls = again.resolve("my-agent")
    assert (cls.agent_id, cls.cli_binary, cls.acp_args) == ("my-agent", "my-agent", ("--acp",))
    # a custom manifest of a protocol with no driver installed still cannot run
    registry.add_custom(
        {
            **_custom("other"),
            "streaming": {
                "preferred": {**_custom()["streaming"]["preferred"], "protocol": "pi-rpc"}
            },
        }
    )
    other = Registry(entry_points=no_entry_points)
    assert other.runnable("other").runnable is False
    assert other.capabilities("other")[1] == "none"
    other.remove_custom("other")
    again.remove_custom("my-agent")
    assert not saved.exists()
    assert "my-agent" not in Registry(entry_points=no_entry_points)


def test_custom_id_colliding_with_builtin_is_rejected(corral_home: Path) -> None:
    registry = Registry(entry_points=no_entry_points)
    with pytest.raises(ManifestError) as info:
        registry.add_custom(_custom("claude-code"))
    assert [(v.path, v.rule) for v in info.value.violations] == [("id", "id-available")]
    assert not (corral_home / "adapters").exists()


def test_custom_add_twice_needs_replace() -> None:
    registry = Registry(entry_points=no_entry_points)
    registry.add_custom(_custom())
    with pytest.raises(ManifestError):
        registry.add_custom(_custom())
    changed = {**_custom(), "displayName": "Renamed"}
    assert registry.add_custom(changed, replace=True).display_name == "Renamed"


def test_invalid_custom_add_reports_every_violation() -> None:
    bad = {**_custom(), "id": "bad id", "launchCommand": "", "executables": []}
    with pytest.raises(ManifestError) as info:
        Registry(entry_points=no_entry_points).add_custom(bad)
    assert {v.rule for v in info.value.violations} == {"id-charset", "non-empty", "min-one"}


def test_builtins_cannot_be_removed() -> None:
    with pytest.raises(ConfigError):
        Registry(entry_points=no_entry_points).remove_custom("codex")


def test_bad_files_in_custom_dir_are_logged_and_skipped(
    corral_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = corral_home / "adapters"
    folder.mkdir(parents=True)
    (folder / "broken.json").write_text("{not json")
    (folder / "codex.json").write_text(json.dumps(_custom("codex")))
    (folder / "fine.json").write_text(json.dumps(_custom("fine")))
    with caplog.at_level(logging.WARNING, logger="corral.registry"):
        registry = Registry(entry_points=no_entry_points)
    assert registry.get("fine").source == "custom"
    assert registry.get("codex").source == "builtin"
    origins = sorted(Path(p.origin).name for p in registry.problems)
    assert origins == ["broken.json", "codex.json"]
    assert len([r for r in caplog.records if "skipping adapter" in r.message]) == 2


# ── drop-in Python adapters ──


def test_dropin_dir_loads_only_the_good_module(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ext = tmp_path / "ext"
    _write(ext, "good.py", GOOD_ADAPTER)
    _write(ext, "malformed.py", "class Broken(:\n    pass\n")
    _write(ext, "colliding.py", GOOD_ADAPTER.replace('"echo-dropin"', '"claude-code"'))
    with caplog.at_level(logging.WARNING, logger="corral.registry"):
        registry = Registry(ext_dir=ext, entry_points=no_entry_points)

    dropins = [e for e in registry.entries() if e.source == "dropin"]
    assert [e.id for e in dropins] == ["echo-dropin"]
    entry = registry.get("echo-dropin")
    assert entry.manifest.executables == ["echo"]
    assert entry.manifest.display_name == "Echo"
    assert registry.adapter_class("echo-dropin") is entry.adapter_class
    caps, source = registry.capabilities("echo-dropin")
    assert (caps.enabled(), source) == (["cancel"], "adapter-class")
    assert registry.get("claude-code").source == "builtin"

    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert any("malformed.py" in w and "SyntaxError" in w for w in warnings)
    assert any("colliding.py" in w and "collides with a built-in" in w for w in warnings)


def test_dropin_breaking_the_contract_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ext = tmp_path / "ext"
    _write(ext, "good.py", GOOD_ADAPTER)
    _write(
        ext,
        "nomodels.py",
        GOOD_ADAPTER.replace("    provides_models = False\n", "").replace(
            "echo-dropin", "nomodels"
        ),
    )
    _write(ext, "importerror.py", "import corral_no_such_module\n")
    _write(ext, "_private.py", "raise RuntimeError('never imported')\n")
    with caplog.at_level(logging.WARNING, logger="corral.registry"):
        registry = Registry(ext_dir=ext, entry_points=no_entry_points)
    assert "echo-dropin" in registry
    assert "nomodels" not in registry
    messages = " | ".join(r.getMessage() for r in caplog.records)
    assert "AdapterContractError" in messages
    assert "provides_models must be declared explicitly" in messages
    assert "ModuleNotFoundError" in messages
    assert "_private" not in messages


def test_ext_dir_defaults_under_home_and_env_overrides(
    tmp_path: Path, corral_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(corral_home / "ext_adapters", "good.py", GOOD_ADAPTER)
    assert "echo-dropin" in Registry(entry_points=no_entry_points)
    monkeypatch.setenv("CORRAL_EXT_ADAPTERS_DIR", str(tmp_path / "elsewhere"))
    assert "echo-dropin" not in Registry(entry_points=no_entry_points)


def test_contract_check_runs_at_class_definition() -> None:
    with pytest.raises(TypeError, match="provides_models must be declared explicitly"):

        class MissingModels(BaseAdapter):
            agent_id = "x"
            display_name = "X"
            provides_usage = False

            async def start(self, session_id: str) -> Any:
                return None

            async def send(self, text: str, attachments: Any = None) -> None:
                return None

            async def stream(self) -> Any:
                yield None

            async def stop(self) -> None:
                return None

    assert issubclass(AdapterContractError, TypeError)


# ── entry points ──


class FakeEntryPoint:
    def __init__(self, name: str, value: str, obj: Any) -> None:
        self.name = name
        self.value = value
        self._obj = obj

    def load(self) -> Any:
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


def _source(groups: dict[str, list[FakeEntryPoint]]) -> Any:
    def entry_points(group: str) -> Iterable[FakeEntryPoint]:
        return groups.get(group, [])

    return entry_points


def _adapter_class(agent_id: str) -> type[BaseAdapter]:
    namespace: dict[str, Any] = {}
    exec(GOOD_ADAPTER.replace("echo-dropin", agent_id), namespace)
    cls: type[BaseAdapter] = namespace["EchoAdapter"]
    return cls


def test_entry_point_adapters_load_and_collisions_are_rejected(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = _source(
        {
            "corral.adapters": [
                FakeEntryPoint("third", "pkg:Third", _adapter_class("third-party")),
                FakeEntryPoint("clash", "pkg:Clash", _adapter_class("codex")),
                FakeEntryPoint("broken", "pkg:Broken", ImportError("no pkg")),
                FakeEntryPoint("junk", "pkg:junk", 42),
            ]
        }
    )
    with caplog.at_level(logging.WARNING, logger="corral.registry"):
        registry = Registry(entry_points=source)
    assert registry.get("third-party").source == "entry-point"
    assert registry.get("codex").source == "builtin"
    assert len(registry.problems) == 3
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 3


def test_drivers_seam_maps_protocols_to_classes(caplog: pytest.LogCaptureFixture) -> None:
    acp_driver = _adapter_class("acp-driver")
    source = _source(
        {
            DRIVERS_GROUP: [
                FakeEntryPoint("acp", "corral.adapters.acp:AcpAdapter", acp_driver),
                FakeEntryPoint("telepathy", "x:Y", acp_driver),
                FakeEntryPoint("pi-rpc", "x:NotAClass", "nope"),
            ]
        }
    )
    with caplog.at_level(logging.WARNING, logger="corral.registry"):
        registry = Registry(entry_points=source)
        # droid has no class of corral's own: its protocol's driver drives it
        assert registry.adapter_class("droid") is acp_driver
        # a built-in id with corral's own class keeps it, whatever drivers are installed
        assert registry.adapter_class("claude-code") is ClaudeAdapter
        assert registry.adapter_class("cursor") is None
    assert len([r for r in caplog.records if "skipping driver" in r.message]) == 2
    # no driver is installed for that protocol: None, never an error
    assert Registry().adapter_class("cursor") is None


# ── detection through the registry ──

SELF_DETECTING = (
    GOOD_ADAPTER.replace("echo-dropin", "self-detecting")
    + """
    @classmethod
    async def detect(cls, *, timeout=10.0):
        from corral.adapters.base import DetectedAgent
        return DetectedAgent(agent_id=cls.agent_id, path="http://127.0.0.1:1/health", version="4.5.6")
"""
)


async def test_detect_entries_lets_an_adapter_class_detect_itself(tmp_path: Path) -> None:
    ext = tmp_path / "ext"
    _write(ext, "self_detecting.py", SELF_DETECTING)
    _write(ext, "good.py", GOOD_ADAPTER)
    registry = Registry(ext_dir=ext, entry_points=no_entry_points)
    entries = [
        registry.get("self-detecting"),
        registry.get("echo-dropin"),
        registry.get("example-plain-stdin"),
    ]
    results = await detect_entries(entries)
    assert [(r.adapter_id, r.status, r.source) for r in results] == [
        ("self-detecting", "installed", "adapter-class"),
        ("echo-dropin", "installed", "path"),
        ("example-plain-stdin", "installed", "path"),
    ]
    assert results[0].version == "4.5.6"
