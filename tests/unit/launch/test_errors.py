"""Every code of the error catalog, produced; its exact template; a distinct exit code each."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from corral.cli import build_app
from corral.launch import CATALOG, LaunchError, LaunchOptions, build_plan, launch
from corral.launch._env import HarnessLaunch, ProxyConfig
from corral.launch._proxy import start_proxy_process
from corral.launch._runner import run_harness

SEED_TEMPLATES = {
    "HARNESS_NOT_FOUND": "Unknown harness '{name}'. Available: {list}",
    "HARNESS_NOT_INSTALLED": "{harness} is not installed. Install with: {installCommand}",
    "PROVIDER_UNSUPPORTED": "{harness} cannot use provider '{provider}' (no native support and proxy not enabled)",
    "PROXY_REQUIRED": "{harness} requires a proxy for {provider}. Remove --no-proxy or use --with-proxy-if-needed",
    "PROXY_HEALTH_TIMEOUT": "Proxy health check timed out after 15s on port {port}",
    "AUTH_MISSING": "Provider '{provider}' requires authentication. Set {envVar} or use --api-key",
    "TRANSPORT_MISMATCH": "Transport '{transport}' is not available for {harness}+{provider}",
    "RESUME_NOT_SUPPORTED": "{harness} does not support session resumption",
    "MODEL_NOT_SPECIFIED": "Provider '{provider}' requires --model to be specified",
}
REGISTERED = {"example-plain-argv": "plain"}


def _plan(opts: LaunchOptions, env: dict[str, str] | None = None, **kw: Any) -> Any:
    return build_plan(
        opts,
        env or {},
        locate=lambda a: f"/opt/{a}",
        launch_home=Path("/tmp/h"),
        registered=REGISTERED,
        **kw,
    )


def expect(code: str, fn: Any, *args: Any, **kw: Any) -> LaunchError:
    with pytest.raises(LaunchError) as info:
        fn(*args, **kw)
    assert info.value.code == code, str(info.value)
    assert info.value.exit_code == CATALOG[code][0]
    return info.value


def test_seed_templates_are_word_for_word() -> None:
    for code, template in SEED_TEMPLATES.items():
        assert CATALOG[code][1] == template
    assert "PROXY_LAUNCH_FAILED" in CATALOG


def test_exit_codes_are_distinct_and_outside_common_ranges() -> None:
    codes = [c for c, _ in CATALOG.values()]
    assert len(set(codes)) == len(codes)
    assert all(60 <= c < 80 for c in codes)


def test_messages_fill_every_field() -> None:
    for code, (_, template) in CATALOG.items():
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
        err = LaunchError(code, **{f: f"<{f}>" for f in fields})
        assert "{" not in str(err)


def test_resolution_errors() -> None:
    e = expect("HARNESS_NOT_FOUND", _plan, LaunchOptions("nope"))
    assert "claude" in str(e) and "Unknown harness 'nope'" in str(e)
    assert "example-plain-argv" not in str(e)  # listed only what can be launched
    expect("HARNESS_NOT_LAUNCHABLE", _plan, LaunchOptions("example-plain-argv"))
    expect("PROVIDER_NOT_FOUND", _plan, LaunchOptions("claude", "nowhere"))
    expect(
        "PROVIDER_UNSUPPORTED",
        _plan,
        LaunchOptions("codex", "bedrock", model="m"),
        {"AWS_PROFILE": "x"},
    )
    expect(
        "PROXY_REQUIRED",
        _plan,
        LaunchOptions("codex", "bedrock", model="m", no_proxy=True),
        {"AWS_PROFILE": "x"},
    )
    e = expect("AUTH_MISSING", _plan, LaunchOptions("claude", "anthropic"))
    assert "ANTHROPIC_API_KEY" in str(e)
    expect("TRANSPORT_MISMATCH", _plan, LaunchOptions("claude", transport="google"))
    e = expect("AUTH_MISSING", _plan, LaunchOptions("codex", "api"))
    assert "Provider 'api'" in str(e) and "OPENAI_API_KEY" in str(e)
    _plan(LaunchOptions("codex"))  # the default provider: the harness's own login or key
    _plan(LaunchOptions("opencode", "api"))  # multi-provider: its own configuration
    expect("TRANSPORT_REQUIRED", _plan, LaunchOptions("claude", "custom", model="m"))
    expect("RESUME_NOT_SUPPORTED", _plan, LaunchOptions("gemini", resume="abc"))
    expect("MODEL_NOT_SPECIFIED", _plan, LaunchOptions("claude", "bedrock"), {"AWS_PROFILE": "x"})
    expect(
        "PROXY_UNAVAILABLE",
        _plan,
        LaunchOptions("copilot", "anthropic", model="m", api_key="k", with_proxy_if_needed=True),
    )
    expect("OPTION_UNSUPPORTED", _plan, LaunchOptions("gemini", session_id="s"))
    expect("OPTION_UNSUPPORTED", _plan, LaunchOptions("claude", observe=True))


def test_profile_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    expect("PROFILE_INVALID", launch, LaunchOptions("claude", profile="work", dry_run=True))
    (tmp_path / "providers.json").write_text(json.dumps({"profiles": {"bad": {"provider": "x"}}}))
    expect("PROFILE_INVALID", launch, LaunchOptions("claude", profile="bad", dry_run=True))


def test_profile_from_the_corral_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    profiles = {
        "chat": {
            "provider": "openai-compatible",
            "wire": "openai-chat",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "gpt-x",
            "credentials": [{"api_key_env": "MY_KEY"}],
        }
    }
    (tmp_path / "providers.json").write_text(json.dumps({"profiles": profiles}))
    rc = launch(
        LaunchOptions("claude", profile="chat", with_proxy_if_needed=True, dry_run=True), {}
    )
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["provider"] == "custom" and data["providerTransport"] == "openai-chat"
    assert data["model"] == "gpt-x"
    profile = json.loads(data["proxy"]["env"]["CORRAL_PROXY_PROFILE_JSON"])
    assert profile["credentials"] == [{"api_key_env": "MY_KEY"}]
    assert profile["base_url"] == "http://127.0.0.1:9/v1"


def test_not_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import corral.launch._launch as L

    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    monkeypatch.setattr(L, "_locate", lambda agent: None)
    e = expect("HARNESS_NOT_INSTALLED", launch, LaunchOptions("claude", prompt="hi"), {})
    assert "corral agents install claude" in str(e)


def _config(profile: dict[str, Any]) -> ProxyConfig:
    return ProxyConfig(
        profile=profile,
        exposed="anthropic",
        port=0,
        env={"CORRAL_PROXY_PROFILE_JSON": json.dumps(profile), "CORRAL_PROXY_USAGE_LOG": ""},
    )


def test_proxy_launch_failed_when_the_proxy_dies() -> None:
    e = expect(
        "PROXY_LAUNCH_FAILED",
        start_proxy_process,
        _config({"provider": "nowhere"}),
        {"PATH": "/usr/bin"},
    )
    assert "exit" in str(e)


def test_proxy_health_timeout() -> None:
    good = {"provider": "anthropic", "base_url": "http://127.0.0.1:9"}
    expect(
        "PROXY_HEALTH_TIMEOUT",
        start_proxy_process,
        _config(good),
        {"PATH": "/usr/bin"},
        timeout=0.05,
    )


def test_harness_launch_failed(tmp_path: Path) -> None:
    missing = HarnessLaunch(str(tmp_path / "no-such-binary"), (), {})
    expect("HARNESS_LAUNCH_FAILED", run_harness, missing, {}, use_pty=False)


def test_cli_exit_code_is_the_catalog_code(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        build_app(),
        ["launch", "codex", "bedrock", "-m", "m", "--dry-run"],
        env={"CORRAL_HOME": str(tmp_path)},
    )
    assert result.exit_code == CATALOG["AUTH_MISSING"][0]


PRODUCERS: dict[str, Any] = {
    "HARNESS_NOT_FOUND": lambda tmp: _plan(LaunchOptions("nope")),
    "HARNESS_NOT_LAUNCHABLE": lambda tmp: _plan(LaunchOptions("example-plain-argv")),
    "HARNESS_NOT_INSTALLED": None,  # test_not_installed
    "PROVIDER_NOT_FOUND": lambda tmp: _plan(LaunchOptions("claude", "nowhere")),
    "PROVIDER_UNSUPPORTED": lambda tmp: _plan(
        LaunchOptions("codex", "bedrock", model="m"), {"AWS_PROFILE": "x"}
    ),
    "PROXY_REQUIRED": lambda tmp: _plan(
        LaunchOptions("codex", "bedrock", model="m", no_proxy=True), {"AWS_PROFILE": "x"}
    ),
    "PROXY_UNAVAILABLE": lambda tmp: _plan(
        LaunchOptions("copilot", "anthropic", model="m", api_key="k", with_proxy_if_needed=True)
    ),
    "PROXY_LAUNCH_FAILED": lambda tmp: start_proxy_process(
        _config({"provider": "nowhere"}), {"PATH": "/usr/bin"}
    ),
    "PROXY_HEALTH_TIMEOUT": lambda tmp: start_proxy_process(
        _config({"provider": "anthropic", "base_url": "http://127.0.0.1:9"}),
        {"PATH": "/usr/bin"},
        timeout=0.05,
    ),
    "AUTH_MISSING": lambda tmp: _plan(LaunchOptions("claude", "anthropic")),
    "TRANSPORT_MISMATCH": lambda tmp: _plan(LaunchOptions("claude", transport="google")),
    "TRANSPORT_REQUIRED": lambda tmp: _plan(LaunchOptions("claude", "custom", model="m")),
    "RESUME_NOT_SUPPORTED": lambda tmp: _plan(LaunchOptions("gemini", resume="abc")),
    "MODEL_NOT_SPECIFIED": lambda tmp: _plan(
        LaunchOptions("claude", "bedrock"), {"AWS_PROFILE": "x"}
    ),
    "OPTION_UNSUPPORTED": lambda tmp: _plan(LaunchOptions("gemini", session_id="s")),
    "PROFILE_INVALID": lambda tmp: launch(
        LaunchOptions("claude", profile="work", dry_run=True), {"CORRAL_HOME": str(tmp)}
    ),
    "HARNESS_LAUNCH_FAILED": lambda tmp: run_harness(
        HarnessLaunch(str(tmp / "no-such-binary"), (), {}), {}, use_pty=False
    ),
}


@pytest.mark.parametrize("code", sorted(CATALOG))
def test_every_catalog_code_is_produced(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    producer = PRODUCERS[code]
    if producer is None:
        import corral.launch._launch as L

        monkeypatch.setattr(L, "_locate", lambda agent: None)
        producer = lambda tmp: launch(LaunchOptions("claude", prompt="hi"), {})  # noqa: E731
    expect(code, producer, tmp_path)
