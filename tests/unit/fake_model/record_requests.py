"""Record the model requests the real CLIs send, as fixtures for ``test_recorded_requests.py``.

Runs each pinned CLI headless (fresh HOME, fresh git repo) against the fake server with the
``write-file`` scenario, keeps the generation requests from the request log, shortens tool
*descriptions* (the bulk of every body; nothing reads them) and writes
``fixtures/requests/<cli>-<version>.jsonl``. Usage, from the repo root::

    .venv/bin/python tests/unit/fake_model/record_requests.py [claude codex ...]

The launch settings are the ones in ``docs/testing.md`` ("Pointing each CLI at it").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from corral.testing import FakeModelServer

AGENTS = Path(os.environ.get("CORRAL_AGENTS_DIR", str(Path.home() / ".cache/corral/agents")))
OUT = Path(__file__).parent / "fixtures" / "requests"
VERSIONS = {
    "claude": "2.1.197",
    "codex": "0.171.0",
    "opencode": "1.18.33",
    "gemini": "0.61.0",
    "pi": "0.73.1",
    "qwen": "0.15.10",
    "hermes": "0.19.0",
}
PROMPT = "make hello.txt"
# pi speaks every wire API through the vendors' own SDKs: a second client for each of them.
PI_APIS = {
    "anthropic-messages": "",
    "openai-responses": "/v1",
    "google-generative-ai": "/v1beta",
}
RECORDINGS = [*VERSIONS, *(f"pi@{api}" for api in PI_APIS)]


def _bin(cli: str, name: str | None = None) -> str:
    if cli == "hermes":
        return str(AGENTS / "hermes" / VERSIONS[cli] / "venv/bin/hermes")
    return str(AGENTS / cli / VERSIONS[cli] / "node_modules/.bin" / (name or cli))


def _launch(cli: str, url: str, home: Path, api: str) -> tuple[list[str], dict[str, str]]:
    env: dict[str, str] = {}
    if cli == "claude":
        env = {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        return [
            _bin(cli),
            "-p",
            PROMPT,
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
        ], env
    if cli == "codex":
        provider = f'{{name="fake",base_url="{url}/v1",env_key="FAKE_KEY",wire_api="responses"}}'
        return [
            _bin(cli),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--disable",
            "plugins",
            "--disable",
            "remote_plugin",
            "--disable",
            "apps",
            "--disable",
            "plugin_sharing",
            "-c",
            "check_for_update_on_startup=false",
            "-c",
            "analytics.enabled=false",
            "-c",
            "model_provider=fake",
            "-c",
            "model=fake-model",
            "-c",
            f"model_providers.fake={provider}",
            PROMPT,
        ], {"FAKE_KEY": "test", "CODEX_HOME": str(home)}
    if cli == "opencode":
        config = {
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Fake",
                    "options": {"baseURL": f"{url}/v1", "apiKey": "test"},
                    "models": {"fake-model": {"name": "Fake", "tool_call": True}},
                }
            },
            "model": "fake/fake-model",
            "small_model": "fake/fake-model",
            "permission": {"edit": "allow", "bash": "allow"},
            "autoupdate": False,
            "share": "disabled",
        }
        env = {
            f"OPENCODE_{k}": "1"
            for k in (
                "DISABLE_MODELS_FETCH",
                "DISABLE_DEFAULT_PLUGINS",
                "DISABLE_AUTOUPDATE",
                "DISABLE_LSP_DOWNLOAD",
                "DISABLE_SHARE",
                "DISABLE_CLAUDE_CODE",
            )
        }
        env |= {
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            "npm_config_registry": "http://127.0.0.1:9/",
        }
        return [_bin(cli), "run", "--format", "json", PROMPT], env
    if cli == "gemini":
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        }
        (home / ".gemini").mkdir()
        (home / ".gemini/settings.json").write_text(json.dumps(settings))
        return [
            _bin(cli),
            "-p",
            PROMPT,
            "--output-format",
            "stream-json",
            "--yolo",
            "--skip-trust",
        ], {"GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": url}
    if cli == "pi":
        models = {
            "providers": {
                "fake": {
                    "baseUrl": url + PI_APIS.get(api, "/v1"),
                    "api": api or "openai-completions",
                    "apiKey": "test",
                    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                    "models": [
                        {
                            "id": "fake-model",
                            "name": "Fake",
                            "reasoning": False,
                            "input": ["text"],
                            "contextWindow": 128000,
                            "maxTokens": 8000,
                        }
                    ],
                }
            }
        }
        (home / ".pi/agent").mkdir(parents=True)
        (home / ".pi/agent/models.json").write_text(json.dumps(models))
        return [
            _bin(cli),
            "--mode",
            "json",
            "-p",
            "--provider",
            "fake",
            "--model",
            "fake-model",
            "--offline",
            PROMPT,
        ], {}
    if cli == "qwen":
        (home / ".qwen").mkdir()
        (home / ".qwen/settings.json").write_text(
            json.dumps(
                {
                    "privacy": {"usageStatisticsEnabled": False},
                    "general": {"disableAutoUpdate": True},
                }
            )
        )
        return [
            _bin(cli),
            "--auth-type",
            "openai",
            "-p",
            PROMPT,
            "--output-format",
            "stream-json",
            "--yolo",
        ], {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "test", "OPENAI_MODEL": "fake-model"}
    if cli == "hermes":
        (home / ".hermes").mkdir()
        (home / ".hermes/config.yaml").write_text(
            f"model:\n  provider: custom\n  base_url: {url}/v1\n  default: fake-model\n"
            "  api_key: test\n"
        )
        return [_bin(cli), "-z", PROMPT, "--yolo"], {"HERMES_HOME": str(home / ".hermes")}
    raise SystemExit(f"unknown CLI {cli}")


def _shorten(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _shorten(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v, key) for v in value]
    if key == "description" and isinstance(value, str) and len(value) > 80:
        return value[:80] + "…"
    return value


def record(name: str) -> Path:
    """Record one CLI (``pi@anthropic-messages`` picks pi's wire API)."""
    cli, _, api = name.partition("@")
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer("write-file") as srv:
        home, repo = Path(tmp) / "home", Path(tmp) / "repo"
        home.mkdir()
        repo.mkdir()
        for git in (
            ["init", "-q"],
            [
                "-c",
                "user.name=corral",
                "-c",
                "user.email=corral@invalid",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "init",
            ],
        ):
            subprocess.run(["git", *git], cwd=repo, check=True)
        argv, env = _launch(cli, srv.base_url, home, api)
        run = subprocess.run(
            argv,
            cwd=repo,
            env=os.environ | {"HOME": str(home), "PWD": str(repo)} | env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=180,
        )
        written = (repo / "hello.txt").read_text() if (repo / "hello.txt").exists() else None
        if run.returncode != 0 or written != "hi":
            raise SystemExit(
                f"{cli}: exit {run.returncode}, hello.txt={written!r}\n{srv.requests!r}\n"
                f"{run.stdout.decode()[-2000:]}\n{run.stderr.decode()[-2000:]}"
            )
        rows = [
            {
                "cli": cli,
                "version": VERSIONS[cli],
                "api": api or None,
                "cwd": str(repo),
                "method": r.method,
                "path": r.path,
                "query": r.query,
                "body": _shorten(r.body),
            }
            for r in srv.requests.model_calls()
        ]
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / f"{cli}-{VERSIONS[cli]}{'@' + api if api else ''}.jsonl"
    target.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return target


if __name__ == "__main__":
    for name in sys.argv[1:] or RECORDINGS:
        print(record(name))
