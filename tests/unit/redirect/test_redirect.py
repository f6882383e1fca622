"""Endpoint redirection: pure values checked field by field; no process is started."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml

from corral.errors import ConfigError
from corral.redirect import Redirection, redirect_for, root_url, supported, v1_url

BASE = "http://127.0.0.1:4567"
HOME = Path("/iso/home")


def _redirect(agent: str, **kw: object) -> Redirection:
    args: dict[str, object] = {
        "base_url": BASE,
        "model": "fake-model",
        "api_key": "k-1",
        "home": HOME,
    }
    args.update(kw)
    return redirect_for(agent, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "root", "v1"),
    [
        ("http://127.0.0.1:9", "http://127.0.0.1:9", "http://127.0.0.1:9/v1"),
        ("http://127.0.0.1:9/", "http://127.0.0.1:9", "http://127.0.0.1:9/v1"),
        ("http://127.0.0.1:9/v1", "http://127.0.0.1:9", "http://127.0.0.1:9/v1"),
        ("http://127.0.0.1:9/v1/", "http://127.0.0.1:9", "http://127.0.0.1:9/v1"),
    ],
)
def test_base_url_forms(given: str, root: str, v1: str) -> None:
    assert (root_url(given), v1_url(given)) == (root, v1)


# (agent, env entries that must be there exactly)
ENV_CASES = [
    (
        "claude",
        {
            "ANTHROPIC_BASE_URL": BASE,
            "ANTHROPIC_API_KEY": "k-1",
            "ANTHROPIC_MODEL": "fake-model",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CONFIG_DIR": "/iso/home/.claude",
        },
    ),
    ("codex", {"CODEX_HOME": "/iso/home/.codex", "CORRAL_MODEL_API_KEY": "k-1"}),
    (
        "opencode",
        {
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        },
    ),
    (
        "kilo",
        {
            "KILO_DISABLE_MODELS_FETCH": "1",
            "KILO_DISABLE_AUTOUPDATE": "1",
            "KILO_TELEMETRY_LEVEL": "off",
        },
    ),
    (
        "gemini",
        {
            "GEMINI_API_KEY": "k-1",
            "GOOGLE_GEMINI_BASE_URL": BASE,
            "GEMINI_CLI_HOME": "/iso/home",
        },
    ),
    ("pi", {"PI_CODING_AGENT_DIR": "/iso/home/.pi/agent", "PI_OFFLINE": "1"}),
    (
        "qwen",
        {
            "OPENAI_BASE_URL": BASE + "/v1",
            "OPENAI_API_KEY": "k-1",
            "OPENAI_MODEL": "fake-model",
        },
    ),
    ("hermes", {"HERMES_HOME": "/iso/home/.hermes"}),
]


@pytest.mark.parametrize(("agent", "expected"), ENV_CASES, ids=[c[0] for c in ENV_CASES])
def test_env(agent: str, expected: dict[str, str]) -> None:
    env = _redirect(agent).env
    assert {k: env.get(k) for k in expected} == expected


@pytest.mark.parametrize("agent", supported())
def test_every_cli_gets_the_isolated_home_and_xdg_dirs(agent: str) -> None:
    r = _redirect(agent)
    assert r.agent == agent
    assert r.env["HOME"] == "/iso/home"
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        assert r.env[var].startswith("/iso/home/"), var
    for path in r.files:
        assert path.is_relative_to(HOME), path
    assert all(d.is_relative_to(HOME) for d in r.dirs)


@pytest.mark.parametrize("agent", supported())
def test_trailing_v1_in_base_url_changes_nothing(agent: str) -> None:
    assert _redirect(agent, base_url=BASE + "/v1/") == _redirect(agent)


ARGV_CASES = [
    ("claude", ()),
    ("opencode", ()),
    ("hermes", ()),
    ("gemini", ("--model", "fake-model")),
    ("pi", ("--provider", "corral", "--model", "fake-model", "--offline")),
    ("qwen", ("--auth-type", "openai")),
]


@pytest.mark.parametrize(("agent", "argv"), ARGV_CASES, ids=[c[0] for c in ARGV_CASES])
def test_argv(agent: str, argv: tuple[str, ...]) -> None:
    assert _redirect(agent).argv == argv


def test_codex_argv_is_a_custom_responses_provider() -> None:
    argv = list(_redirect("codex").argv)
    disabled = [argv[i + 1] for i, a in enumerate(argv) if a == "--disable"]
    assert disabled == ["plugins", "remote_plugin", "apps", "plugin_sharing"]
    settings = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "-c")
    assert settings["check_for_update_on_startup"] == "false"
    assert settings["analytics.enabled"] == "false"
    # every -c value is a TOML value; parse them as Codex does
    parsed = {k: tomllib.loads(f"v = {v}")["v"] for k, v in settings.items()}
    assert parsed["model_provider"] == "corral"
    assert parsed["model"] == "fake-model"
    assert parsed["model_providers.corral"] == {
        "name": "corral",
        "base_url": BASE + "/v1",
        "env_key": "CORRAL_MODEL_API_KEY",
        "wire_api": "responses",
    }


@pytest.mark.parametrize("agent", ["opencode", "kilo"])
def test_opencode_family_inline_config(agent: str) -> None:
    prefix = agent.upper()
    config = json.loads(_redirect(agent).env[f"{prefix}_CONFIG_CONTENT"])
    provider = config["provider"]["corral"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"] == {"baseURL": BASE + "/v1", "apiKey": "k-1"}
    assert provider["models"]["fake-model"]["tool_call"] is True
    assert config["model"] == config["small_model"] == "corral/fake-model"
    assert config["permission"] == {"edit": "allow", "bash": "allow", "webfetch": "allow"}
    assert config["autoupdate"] is False


def test_gemini_settings_select_api_key_auth_and_switch_off_stats() -> None:
    r = _redirect("gemini")
    settings = json.loads(r.files[HOME / ".gemini" / "settings.json"])
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["general"]["enableAutoUpdate"] is False


def test_pi_models_json() -> None:
    r = _redirect("pi")
    models = json.loads(r.files[HOME / ".pi" / "agent" / "models.json"])
    provider = models["providers"]["corral"]
    assert (provider["baseUrl"], provider["api"], provider["apiKey"]) == (
        BASE + "/v1",
        "openai-completions",
        "k-1",
    )
    assert [m["id"] for m in provider["models"]] == ["fake-model"]


def test_qwen_settings_switch_off_stats_and_updates() -> None:
    settings = json.loads(_redirect("qwen").files[HOME / ".qwen" / "settings.json"])
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["general"]["disableAutoUpdate"] is True


def test_hermes_config_is_the_bare_custom_provider() -> None:
    r = _redirect("hermes")
    config = yaml.safe_load(r.files[HOME / ".hermes" / "config.yaml"])
    assert config["model"] == {
        "provider": "custom",
        "base_url": BASE + "/v1",
        "default": "fake-model",
        "api_key": "k-1",
        "context_length": 128_000,
    }
    assert config["model_catalog"]["enabled"] is False
    assert "k-1" in r.files[HOME / ".hermes" / ".env"]


@pytest.mark.parametrize(("bypass", "expected"), [(False, None), (True, "1")])
def test_claude_is_sandbox_only_when_bypassing(bypass: bool, expected: str | None) -> None:
    assert _redirect("claude", bypass_permissions=bypass).env.get("IS_SANDBOX") == expected


@pytest.mark.parametrize("agent", [a for a in supported() if a != "claude"])
def test_bypass_changes_nothing_elsewhere(agent: str) -> None:
    assert _redirect(agent, bypass_permissions=True) == _redirect(agent)


def test_unknown_agent() -> None:
    with pytest.raises(ConfigError, match="no endpoint redirection for agent 'nope'"):
        _redirect("nope")


def test_apply_writes_files_and_dirs(tmp_path: Path) -> None:
    r = redirect_for("pi", base_url=BASE, model="m", api_key="k", home=tmp_path / "h")
    r.apply()
    written = tmp_path / "h" / ".pi" / "agent" / "models.json"
    assert json.loads(written.read_text())["providers"]["corral"]["apiKey"] == "k"
    r2 = redirect_for("codex", base_url=BASE, model="m", api_key="k", home=tmp_path / "c")
    r2.apply()
    assert (tmp_path / "c" / ".codex").is_dir()


def test_environ_overlays_env() -> None:
    r = _redirect("qwen")
    env = r.environ({"PATH": "/bin", "OPENAI_API_KEY": "real", "HOME": "/root"})
    assert env["PATH"] == "/bin"
    assert env["OPENAI_API_KEY"] == "k-1"
    assert env["HOME"] == "/iso/home"


def test_kilo_moves_its_vendor_api_to_a_dead_loopback_port() -> None:
    env = _redirect("kilo").env
    assert env["KILO_TELEMETRY_LEVEL"] == "off"
    for name in ("KILO_API_URL", "KILO_API_BASE"):
        assert env[name].startswith("http://127.0.0.1:")


def test_aider_points_litellm_at_the_endpoint_and_answers_the_model_lookup_locally() -> None:
    r = _redirect("aider")
    assert r.env["OPENAI_API_BASE"] == BASE + "/v1"
    assert r.env["OPENAI_API_KEY"] == "k-1"
    assert r.env["AIDER_MODEL"] == "openai/fake-model"
    assert r.env["AIDER_CHECK_UPDATE"] == "false"
    assert r.env["AIDER_ANALYTICS_DISABLE"] == "true"
    assert r.env["HOME"] == str(HOME)
    metadata = json.loads(r.files[HOME / ".aider.model.metadata.json"])
    assert metadata["openai/fake-model"]["litellm_provider"] == "openai"
    assert metadata["openai/fake-model"]["max_input_tokens"] > 0
