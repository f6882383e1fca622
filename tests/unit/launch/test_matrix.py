"""The dry-run plan of every harness × provider cell, against seed 004's rules (no process).

native cell → no proxy block; not native → a proxy block exposing the harness's wire (with
``--with-proxy-if-needed``), ``PROVIDER_UNSUPPORTED`` without it, ``PROXY_REQUIRED`` with
``--no-proxy``, or ``PROXY_UNAVAILABLE`` when corral cannot point that harness anywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.launch import HARNESSES, PROVIDERS, LaunchError, LaunchOptions, build_plan
from corral.launch._tables import DEFAULT_TRANSPORT, native_cell

ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-envkey-0123456789",
    "OPENAI_API_KEY": "sk-openai-envkey-0123456789",
    "GEMINI_API_KEY": "AIza-envkey-0123456789",
    "AWS_PROFILE": "dev",
    "GOOGLE_CLOUD_PROJECT": "proj",
    "AZURE_OPENAI_API_KEY": "azure-envkey-0123456789",
    "ANTHROPIC_FOUNDRY_API_KEY": "foundry-envkey-0123456789",
}
HOME = Path("/tmp/corral-launch-test-home")
ACP = {"my-acp-agent": "acp:my-agent --acp", "example-plain-argv": "plain"}
ALL_HARNESSES = [*HARNESSES, "my-acp-agent"]
CUSTOM_WIRES = ["anthropic", "openai-chat", "openai-responses", "google"]


def plan(harness: str, provider: str | None, **kw: Any) -> dict[str, Any]:
    opts = LaunchOptions(harness, provider, **kw)
    result = build_plan(
        opts, ENV, locate=lambda agent: f"/opt/bin/{agent}", launch_home=HOME, registered=ACP
    )
    data: dict[str, Any] = result.to_json()
    return data


def cells() -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = []
    for h in ALL_HARNESSES:
        for p in PROVIDERS:
            if p == "custom":
                out += [(h, p, w) for w in CUSTOM_WIRES]
            else:
                out.append((h, p, None))
    return out


def _row(harness: str) -> Any:
    from corral.launch._tables import acp_harness

    return HARNESSES.get(harness) or acp_harness(harness, ("my-agent", "--acp"))


@pytest.mark.parametrize(("harness", "provider", "wire"), cells())
def test_every_cell_follows_the_seed(harness: str, provider: str, wire: str | None) -> None:
    row = _row(harness)
    kw: dict[str, Any] = {"model": "m-1", "api_base": "http://127.0.0.1:19/v1"}
    if wire:
        kw["transport"] = wire
    native = native_cell(row, provider, wire)
    if native is not None:
        data = plan(harness, provider, **kw)
        assert data["proxyNeeded"] is False
        assert "proxy" not in data
        assert data["proxyReason"].startswith("Proxy not needed")
        assert data["command"] == f"/opt/bin/{row.agent}"
        return
    with pytest.raises(LaunchError) as no_flag:
        plan(harness, provider, **kw)
    assert no_flag.value.code == "PROVIDER_UNSUPPORTED"
    with pytest.raises(LaunchError) as refused:
        plan(harness, provider, no_proxy=True, **kw)
    assert refused.value.code == "PROXY_REQUIRED"
    proxy_possible = bool(row.transports) and PROVIDERS[provider].proxy_kind is not None
    if not proxy_possible:
        with pytest.raises(LaunchError) as unavailable:
            plan(harness, provider, with_proxy_if_needed=True, **kw)
        assert unavailable.value.code == "PROXY_UNAVAILABLE"
        return
    data = plan(harness, provider, with_proxy_if_needed=True, **kw)
    assert data["proxyNeeded"] is True
    block = data["proxy"]
    assert block["exposedTransport"] == DEFAULT_TRANSPORT[row.name] == data["transport"]
    assert block["targetProvider"] == provider
    assert block["targetModel"] == "m-1"
    assert block["env"]["CORRAL_PROXY_EXPOSED_TRANSPORT"] == data["transport"]
    # the harness is pointed at the proxy, with the proxy's token, never at the provider
    text = repr(data["env"]) + repr(data["args"]) + repr(data["files"])
    assert "<resolved-port>" in text
    assert "127.0.0.1:19" not in text


def test_matrix_of_the_seed_is_the_table() -> None:
    """Seed 004 §3.2, cell by cell (✅/⚠️ = native, ❌ = proxy)."""
    seed = {
        "claude": "api bedrock vertex foundry oauth ollama",
        "codex": "api oauth ollama",
        "gemini": "api vertex oauth",
        "opencode": "api bedrock vertex azure ollama",
        "copilot": "oauth",
        "cursor": "api oauth",
    }
    columns = ["api", "bedrock", "vertex", "azure", "foundry", "oauth", "local", "ollama"]
    for harness, natives in seed.items():
        row = HARNESSES[harness]
        got = {p for p in columns if native_cell(row, p, None) is not None}
        assert got == set(natives.split()), harness


def test_hack_cells_are_marked() -> None:
    assert HARNESSES["claude"].native["ollama"][0] == "hack"
    assert HARNESSES["opencode"].native["ollama"][0] == "hack"
    assert HARNESSES["codex"].native["ollama"][0] == "yes"


def test_seed_dry_run_examples() -> None:
    native = plan("claude", "bedrock", model="anthropic.claude-sonnet-4", region="us-east-1")
    assert native["proxyNeeded"] is False
    assert native["env"]["CLAUDE_CODE_USE_BEDROCK"] == "1"
    assert native["env"]["AWS_REGION"] == "us-east-1"
    proxied = plan(
        "codex",
        "bedrock",
        model="anthropic.claude-sonnet-4",
        region="us-west-2",
        with_proxy_if_needed=True,
        prompt="Fix the failing test",
    )
    assert proxied["transport"] == "openai-responses"
    assert proxied["providerTransport"] == "anthropic"
    assert proxied["proxy"]["env"]["AWS_REGION"] == "us-west-2"
    assert proxied["args"][0] == "exec"
    assert proxied["args"][-1] == "Fix the failing test"


def test_with_proxy_forces_a_proxy_on_a_native_cell() -> None:
    data = plan("claude", "anthropic", model="claude-x", with_proxy=True)
    assert data["proxyNeeded"] is True
    assert data["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:<resolved-port>"
    assert data["env"]["ANTHROPIC_AUTH_TOKEN"] == "<proxy-token>"
    assert "ANTHROPIC_API_KEY" not in data["env"] and data["unsetEnv"] == ["ANTHROPIC_API_KEY"]


def test_secrets_are_redacted() -> None:
    secret = "sk-live-supersecretvalue-0123456789"
    for data in (
        plan("claude", "anthropic", api_key=secret),
        plan(
            "claude",
            "custom",
            transport="openai-chat",
            api_key=secret,
            model="m",
            api_base="http://127.0.0.1:19/v1",
            with_proxy_if_needed=True,
        ),
        plan("opencode", "anthropic", api_key=secret, model="m"),
    ):
        assert secret not in repr(data)
        assert "[REDACTED]" in repr(data)


def test_interactive_and_one_shot_argv() -> None:
    assert plan("codex", None, prompt="hi")["args"] == ["exec", "hi"]
    assert plan("opencode", None, prompt="hi")["args"] == ["run", "hi"]
    assert plan("gemini", None, prompt="hi")["args"] == ["-p", "hi"]
    assert plan("hermes", None, prompt="hi")["args"] == ["-z", "hi"]
    claude = plan("claude", None, prompt="hi", max_turns=3, session_id="abc")
    assert claude["args"] == ["--session-id", "abc", "--max-turns", "3", "-p", "hi"]
    assert claude["mode"] == "non-interactive" and claude["pty"] is False
    interactive = plan("claude", None)
    assert interactive["args"] == [] and interactive["pty"] is True
    assert plan("codex", None, resume="r1")["args"] == ["resume", "r1"]
    assert plan("codex", None, resume="r1", prompt="go")["args"] == ["exec", "resume", "r1", "go"]
    assert plan("opencode", None, resume="s1")["args"] == ["--session", "s1"]


def test_harness_args_come_after_managed_args_and_before_the_prompt() -> None:
    data = plan("claude", None, prompt="hi", harness_args=("--bare", "--verbose"))
    assert data["args"] == ["--bare", "--verbose", "-p", "hi"]
    assert data["harnessArgs"] == ["--bare", "--verbose"]


def test_file_writing_harnesses_get_a_launch_home_of_their_own() -> None:
    data = plan(
        "gemini",
        "custom",
        transport="openai-chat",
        model="m",
        api_base="http://127.0.0.1:19/v1",
        with_proxy_if_needed=True,
    )
    assert data["home"] == str(HOME / "gemini")
    assert data["env"]["HOME"] == str(HOME / "gemini")
    claude = plan(
        "claude",
        "custom",
        transport="openai-chat",
        model="m",
        api_base="http://127.0.0.1:19/v1",
        with_proxy_if_needed=True,
    )
    assert claude["home"] is None and "HOME" not in claude["env"]


def test_explicit_home_isolates_every_harness(tmp_path: Path) -> None:
    data = plan(
        "claude",
        "custom",
        transport="anthropic",
        model="m",
        api_base="http://127.0.0.1:19",
        home=tmp_path,
    )
    assert data["proxyNeeded"] is False
    assert data["env"]["HOME"] == str(tmp_path)
    assert data["env"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:19"


def test_observe_adds_structured_output_for_one_shot() -> None:
    data = plan("claude", None, prompt="hi", observe=True)
    assert data["args"] == ["--output-format", "stream-json", "--verbose", "-p", "hi"]
    chosen = plan(
        "claude",
        None,
        prompt="hi",
        observe=True,
        harness_args=("--output-format", "stream-json", "--verbose"),
    )
    assert chosen["args"].count("--output-format") == 1
