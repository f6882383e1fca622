"""pins.toml: the one file that pins the agent CLIs."""

from __future__ import annotations

import pytest

from corral import agents
from corral.agents._pins import parse_pins
from corral.errors import ConfigError

EXPECTED = {
    "claude": ("npm", "@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": ("npm", "@openai/codex", "0.171.0", "codex"),
    "opencode": ("npm", "opencode-ai", "1.18.33", "opencode"),
    "gemini": ("npm", "@google/gemini-cli", "0.61.0", "gemini"),
    "pi": ("npm", "@mariozechner/pi-coding-agent", "0.73.1", "pi"),
    "qwen": ("npm", "@qwen-code/qwen-code", "0.15.10", "qwen"),
    "hermes": ("pypi", "hermes-agent", "0.19.0", "hermes"),
    "kilo": ("npm", "@kilocode/cli", "7.7.7", "kilo"),
    "copilot": ("npm", "@github/copilot", "1.0.102", "copilot"),
    "aider": ("pypi", "aider-chat", "0.86.2", "aider"),
}


def test_packaged_pins() -> None:
    got = {p.name: (p.registry, p.package, p.version, p.bin) for p in agents.pinned()}
    assert got == EXPECTED


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("claude", "@anthropic-ai/claude-code@2.1.197"),
        ("hermes", "hermes-agent[acp]==0.19.0"),
    ],
)
def test_spec(name: str, spec: str) -> None:
    assert agents.get_pin(name).spec == spec


def test_unknown_pin_lists_known_names() -> None:
    with pytest.raises(ConfigError, match=r"no pinned agent named 'nope' \(known: claude, codex"):
        agents.get_pin("nope")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[agents.x\n", "not valid TOML"),
        (
            '[agents.x]\nregistry = "cargo"\npackage = "p"\nversion = "1"\nbins = ["x"]\n',
            "agent 'x'",
        ),
        (
            '[agents.x]\nregistry = "npm"\npackage = "p"\nversion = "1"\nbins = []\n',
            "lists no bins",
        ),
        ('[agents.x]\nregistry = "npm"\npackage = "p"\nbins = ["x"]\n', "agent 'x'"),
    ],
)
def test_bad_pins_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_pins(text)


@pytest.mark.parametrize(
    ("system", "machine", "tag"),
    [
        ("linux", "x86_64", "linux-x64"),
        ("linux", "aarch64", "linux-arm64"),
        ("darwin", "arm64", "darwin-arm64"),
        ("win32", "AMD64", "windows-x64"),
    ],
)
def test_platform_tag(system: str, machine: str, tag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("corral.agents._pins.sys.platform", system)
    monkeypatch.setattr("corral.agents._pins._machine", lambda: machine)
    assert agents.platform_tag() == tag
