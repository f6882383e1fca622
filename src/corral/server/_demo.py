"""The demo provider: the pinned real CLIs driven by corral's scripted model, no account needed.

A newcomer with no agent logged in picks an adapter id ``demo.<adapter id>`` (``demo.claude-code``)
and gets a complete session at once. The service starts the scripted model server
(:class:`corral.testing.FakeModelServer`, 127.0.0.1, port 0) the first time a demo session is
constructed, and the adapter class is the real one with its CLI redirected to that server
(:mod:`corral.redirect`: env, argv, an isolated home under the service's data directory). Nothing
leaves the machine. The scripted model answers by keywords of the prompt (see :data:`DEMO_SCENARIO`):
``write`` a file, ``ask`` a question, ``run`` a command, ``slow`` streams slowly; anything else is
echoed as streamed Markdown.

The hook is the resolver: ``demo_resolver(base, provider)`` maps ``demo.X`` to a subclass of ``X``'s
class whose ``__init__`` adds the redirection to what the session manager offers. Sessions stay
resumable across restarts (the isolated home is stable; the server gets a new port).
"""

from __future__ import annotations

import inspect
import threading
from pathlib import Path
from typing import Any

from .. import agents
from ..adapters.base import BaseAdapter, accepts
from ..errors import AdapterNotFoundError
from ..redirect import Redirection, redirect_for
from ..sessions import Resolver

DEMO_PREFIX = "demo."

DEMO_AGENTS: dict[str, str] = {"claude-code": "claude", "codex": "codex", "opencode": "opencode"}
"""Adapter id → pinned CLI / redirection name, for the adapters with a demo variant."""

DEMO_MODEL = "corral-demo"

_AFTER_TOOL = "Done. The tool call above finished; open it to see its input and output."

DEMO_SCENARIO: dict[str, Any] = {
    "name": "corral-demo",
    "description": "The web app's demo provider: keyword-driven replies, tools on request.",
    "steps": [
        {
            "name": "after a tool",
            "match": {"last_is_tool_result": True},
            "reply": {"text": _AFTER_TOOL, "chunks": 4, "chunk_delay": 0.05},
        },
        {
            "name": "write a file",
            "match": {"user_text_regex": r"(?i)\b(write|file|edit)\b"},
            "reply": {
                "thinking": "The user wants a file. I will write hello.txt with the write tool.",
                "text": "I'll create `hello.txt` in the project.",
                "tool_calls": [
                    {
                        "capability": "write_file",
                        "path": "hello.txt",
                        "content": "hello from the corral demo\n",
                    }
                ],
            },
        },
        {
            "name": "ask a question",
            "match": {"user_text_regex": r"(?i)\b(ask|question)\b"},
            "reply": {
                "tool_calls": [
                    {
                        "capability": "ask_user",
                        "question": "Which color should the demo use?",
                        "options": ["red", "blue"],
                    }
                ]
            },
        },
        {
            "name": "run a command",
            "match": {"user_text_regex": r"(?i)\b(run|command|shell)\b"},
            "reply": {
                "text": "Let me list the project.",
                "tool_calls": [{"capability": "shell", "command": "ls -la"}],
            },
        },
        {
            "name": "slow",
            "match": {"user_text_regex": r"(?i)\bslow\b"},
            "reply": {
                "text": "Working through it slowly, one piece at a time, so you can queue "
                "more prompts while this turn runs. Still going… and done.",
                "chunks": 40,
                "chunk_delay": 0.25,
            },
        },
    ],
    "default": {
        "text": "This is corral's **demo provider**: a scripted model, not an AI. "
        "Try `write a file`, `ask me something`, `run a command` or `slow`.",
        "chunks": 6,
        "chunk_delay": 0.05,
    },
}


def demo_agent_name(adapter_id: str) -> str | None:
    """The pinned CLI behind ``adapter_id``'s demo variant, when it has one and it is installed."""
    name = DEMO_AGENTS.get(adapter_id)
    if name is None or agents.locate(name) is None:
        return None
    return name


class DemoProvider:
    """The scripted model server (started on first use) and the redirections pointing at it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._server: Any = None
        self._lock = threading.Lock()
        self._classes: dict[type[BaseAdapter], type[BaseAdapter]] = {}

    @property
    def running(self) -> bool:
        return self._server is not None

    def base_url(self) -> str:
        with self._lock:
            if self._server is None:
                from ..testing import FakeModelServer

                self._server = FakeModelServer(DEMO_SCENARIO).start()
            url: str = self._server.base_url
            return url

    def scratch_dir(self) -> Path:
        """The working directory of a demo session started without a project."""
        directory = self.home / "project"
        directory.mkdir(parents=True, exist_ok=True)
        return directory

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.stop()

    def redirection(self, agent: str) -> Redirection:
        red = redirect_for(
            agent,
            base_url=self.base_url(),
            model=DEMO_MODEL,
            api_key="corral-demo",
            home=self.home / agent,
        )
        red.apply()
        return red

    def adapter_class(self, adapter_id: str, cls: type[BaseAdapter]) -> type[BaseAdapter]:
        """``cls`` with its CLI redirected to the scripted model."""
        if cls in self._classes:
            return self._classes[cls]
        agent = DEMO_AGENTS[adapter_id]
        provider = self

        def __init__(self: BaseAdapter, **offered: Any) -> None:
            red = provider.redirection(agent)
            kwargs = {k: v for k, v in offered.items() if accepts(cls, k)}
            kwargs["env"] = {**(offered.get("env") or {}), **red.env}
            kwargs["extra_args"] = [*(offered.get("extra_args") or ()), *red.argv]
            if (
                agent == "opencode"
                and not offered.get("permission_mode")
                and "OPENCODE_PERMISSION" not in (offered.get("env") or {})
            ):
                # No intent ("Approve each action"): the redirect's config allows every tool, so
                # the session's own ruleset asks, as OpenCode does when it is not configured.
                kwargs["permission_mode"] = "ask"
            if not kwargs.get("cwd"):
                kwargs["cwd"] = str(provider.scratch_dir())
            binary = agents.locate(agent)
            if binary is not None:
                kwargs["binary"] = str(binary)
            cls.__init__(self, **kwargs)

        # The wrapper takes what the real class takes: construct() and accepts() read this.
        __init__.__signature__ = inspect.signature(cls.__init__)  # type: ignore[attr-defined]
        demo = type(
            f"Demo{cls.__name__}",
            (cls,),
            {
                "__init__": __init__,
                "__module__": __name__,
                "agent_id": DEMO_PREFIX + cls.agent_id,
                "display_name": f"{cls.display_name} (demo)",
                # the hand-off hooks and the resume check read the store in the demo's home
                "store_env": staticmethod(lambda: dict(provider.redirection(agent).env)),
            },
        )
        self._classes[cls] = demo
        return demo


def demo_resolver(base: Resolver, provider: DemoProvider) -> Resolver:
    """``base``, plus ``demo.<id>`` for every adapter in :data:`DEMO_AGENTS`."""

    def resolve(adapter_id: str) -> type[BaseAdapter]:
        if not adapter_id.startswith(DEMO_PREFIX):
            return base(adapter_id)
        inner = adapter_id.removeprefix(DEMO_PREFIX)
        if inner not in DEMO_AGENTS:
            raise AdapterNotFoundError(adapter_id)
        return provider.adapter_class(inner, base(inner))

    return resolve
