"""Each pinned CLI, pointed at the translating proxy, against a scripted upstream of another API.

The CLI is redirected by ``corral.redirect`` (as the launcher does) to the proxy, with the
proxy's own token as its API key; the proxy's profile points at the scripted model server
speaking a *different* wire API. Scenario ``write-file``: the CLI must write ``hello.txt`` with
its own write tool and send the tool result back. The upstream's request log proves which API
was spoken and that the tool result crossed the translation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.proxy import Profile, ProxyServer, ProxySettings
from corral.redirect import redirect_for
from corral.testing import FakeModelServer

MODEL = "fake-model"
PROMPT = "Create a file named hello.txt in the current directory containing exactly: hi"
# agent → (argv before the redirection's argv, argv after it, timeout); as in test_headless.py.
HEADLESS: dict[str, tuple[list[str], list[str], float]] = {
    "claude": (
        [],
        ["--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "-p"],
        120,
    ),
    "codex": (["exec", "--json", "--dangerously-bypass-approvals-and-sandbox"], [], 120),
    "opencode": (["run", "--format", "json"], [], 180),
    "gemini": ([], ["--output-format", "stream-json", "--yolo", "--skip-trust", "-p"], 150),
    "qwen": ([], ["--output-format", "stream-json", "--yolo", "-p"], 150),
}
# upstream wire → how the fake model server logs it
_LOGGED = {
    "openai-chat": "openai-chat",
    "anthropic": "anthropic",
    "google": "gemini",
    "openai-responses": "openai-responses",
}


def upstream_profile(wire: str, fake: FakeModelServer) -> Profile:
    if wire == "anthropic":
        return Profile(provider="anthropic", base_url=fake.base_url, model=MODEL)
    if wire == "google":
        return Profile(provider="google", base_url=fake.base_url, model=MODEL)
    return Profile(
        provider="openai-compatible",
        base_url=fake.base_url + "/v1",
        wire=wire,  # type: ignore[arg-type]
        model=MODEL,
    )


PAIRS = [
    ("claude", "openai-chat"),
    ("codex", "anthropic"),
    ("gemini", "openai-chat"),
    ("opencode", "google"),
    ("qwen", "anthropic"),
]


@pytest.mark.parametrize(
    ("agent", "upstream"),
    [pytest.param(a, u, marks=pytest.mark.realcli(a), id=f"{a}->{u}") for a, u in PAIRS],
)
@pytest.mark.timeout(240)
def test_harness_through_proxy_writes_file(
    agent: str,
    upstream: str,
    fake_model: FakeModelServer,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
    run_agent: Callable[..., Any],
    clean_env: dict[str, str],
    tmp_path: Path,
) -> None:
    binary = agent_bin(agent)
    usage = tmp_path / "usage.jsonl"
    settings = ProxySettings(profile=upstream_profile(upstream, fake_model), usage_log=str(usage))
    with ProxyServer(settings) as proxy:
        before, after, timeout = HEADLESS[agent]
        redirection = redirect_for(
            agent, base_url=proxy.base_url, model=MODEL, api_key=proxy.token, home=isolated_home
        )
        redirection.apply()
        argv = [str(binary), *before, *redirection.argv, *after, PROMPT]
        run = run_agent(
            argv,
            env=redirection.environ(clean_env),
            cwd=git_repo,
            timeout=timeout,
            label=f"{agent}->{upstream}",
        )
    assert run.returncode == 0, run.describe()
    hello = git_repo / "hello.txt"
    assert hello.is_file(), f"hello.txt was not written\n{run.describe()}"
    assert hello.read_text().strip() == "hi"
    calls = fake_model.requests.model_calls()
    assert calls, "the upstream saw no model call"
    assert {r.wire_api for r in calls} == {_LOGGED[upstream]}, [r.wire_api for r in calls]
    assert fake_model.requests.with_tool_result(), [(r.path, r.step) for r in calls]
    records = [json.loads(line) for line in usage.read_text().splitlines()]
    assert records, "the proxy recorded no usage"
    assert all(r["target_wire"] == upstream for r in records)
    assert any(r["input_tokens"] > 0 and r["outcome"] == "complete" for r in records)


THINKING = {
    "name": "thinking-write",
    "steps": [
        {
            "name": "think-then-write",
            "match": {"last_is_tool_result": False},
            "reply": {
                "thinking": "I should write the file.",
                "tool_calls": [{"capability": "write_file", "path": "hello.txt", "content": "hi"}],
            },
        }
    ],
}


@pytest.mark.realcli("claude")
@pytest.mark.timeout(240)
def test_claude_thinking_signature_comes_back_through_responses_upstream(
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
    run_agent: Callable[..., Any],
    clean_env: dict[str, str],
) -> None:
    """Reasoning from a Responses upstream reaches Claude Code as a signed thinking block; the
    next turn's upstream request carries the same reasoning item (id) back."""
    binary = agent_bin("claude")
    with FakeModelServer(THINKING) as fake:
        profile = upstream_profile("openai-responses", fake)
        with ProxyServer(ProxySettings(profile=profile, usage_log="")) as proxy:
            before, after, timeout = HEADLESS["claude"]
            redirection = redirect_for(
                "claude",
                base_url=proxy.base_url,
                model=MODEL,
                api_key=proxy.token,
                home=isolated_home,
            )
            redirection.apply()
            argv = [str(binary), *before, *redirection.argv, *after, PROMPT]
            run = run_agent(argv, env=redirection.environ(clean_env), cwd=git_repo, timeout=timeout)
        assert run.returncode == 0, run.describe()
        assert (git_repo / "hello.txt").read_text().strip() == "hi"
        main = [r for r in fake.requests.main() if r.step is not None]
        first = next(r for r in main if r.step == "think-then-write")
        follow = [r for r in main if r.index > first.index and r.last_is_tool_result]
        assert follow, (
            f"no follow-up turn with the tool result: {[(r.index, r.step) for r in main]}"
        )
        reasoning = [
            item
            for item in follow[0].body["input"]
            if isinstance(item, dict) and item.get("type") == "reasoning"
        ]
        assert reasoning, "the follow-up turn did not carry the reasoning item back"
        assert str(reasoning[0]["id"]).startswith("rs_fake_"), reasoning
        assert reasoning[0]["summary"][0]["text"] == "I should write the file."
