"""Adapters: one module per vendor, all on the contract in :mod:`corral.adapters.base`.

corral's own adapters reach the registry the way every third-party adapter does: through a
``register_adapters(register)`` hook (:func:`register_adapters` below), which registers each class
by a lazy ``module:Class`` reference so a missing optional dependency of one driver never breaks
the others. Nothing turns an id into a class except :class:`corral.registry.Registry`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)

if TYPE_CHECKING:
    from ..registry import Register

BUILTIN_ADAPTERS: dict[str, str] = {
    "claude-code": "corral.adapters.claude:ClaudeAdapter",
    "qwen": "corral.adapters.qwen:QwenAdapter",
    "codex": "corral.adapters.codex:CodexAdapter",
    "codex-exec": "corral.adapters._codex_exec:CodexExecAdapter",
    "gemini": "corral.adapters.gemini:GeminiAdapter",
    "gemini-exec": "corral.adapters.gemini_exec:GeminiExecAdapter",
    "qwen-acp": "corral.adapters.qwen_acp:QwenAcpAdapter",
    "opencode-acp": "corral.adapters.opencode_acp:OpenCodeAcpAdapter",
    "hermes": "corral.adapters.hermes:HermesAdapter",
    "hermes-gateway": "corral.adapters.hermes_gateway:HermesGatewayAdapter",
    "opencode": "corral.adapters.opencode:OpenCodeAdapter",
    "opencode-run": "corral.adapters.opencode_run:OpenCodeRunAdapter",
    "pi": "corral.adapters.pi:PiAdapter",
    "kilo": "corral.adapters.kilo:KiloAdapter",
    "copilot": "corral.adapters.copilot:CopilotAdapter",
    "aider-plain": "corral.adapters.aider_plain:AiderPlainAdapter",
    # The shell grade (seed 000): a CLI in a terminal, prompts typed in (adapters/shell.py).
    "aider-shell": "corral.adapters.shell:AiderShellAdapter",
    "claude-tui": "corral.adapters.shell:ClaudeTuiAdapter",
    "codex-tui": "corral.adapters.shell:CodexTuiAdapter",
}
"""Adapter id → ``module:Class`` of every adapter corral ships."""

NOT_RUNNABLE: dict[str, str] = {
    "droid": "not pinned: @factory/cli 0.225.1 (the newest on npm here) needs "
    "@factory/cli-linux-x64@0.225.1, which is not published, so its binary never installs; the "
    "0.225.2 platform binary alone runs offline (customModels + a dummy FACTORY_API_KEY) but a "
    "platform-only pin is not portable (docs/agents.md)",
    "amp": "cannot run offline: amp 0.0.1790142911 runs every thread on the Amp server "
    '(AMP_URL); pointed at loopback it stops with "Couldn\'t connect to the Amp server" and has no '
    "local model endpoint setting (docs/agents.md)",
    "cursor": "not installable here: Cursor publishes its CLI (cursor-agent) only through its own "
    "installer; the npm and PyPI packages named cursor-agent / cursor-cli are unrelated third-party "
    "tools (docs/agents.md)",
}
"""Built-in manifests corral lists but cannot run, and why (the evidence is in docs/agents.md)."""

ALIASES: dict[str, tuple[str, ...]] = {"claude-code": ("claude",)}
"""Short names accepted wherever an adapter id is."""


def register_adapters(register: Register) -> None:
    """The built-in registration hook: the same path entry points and drop-ins take."""
    for agent_id, ref in BUILTIN_ADAPTERS.items():
        register(ref, agent_id=agent_id, aliases=ALIASES.get(agent_id, ()))


__all__ = ["ALIASES", "BUILTIN_ADAPTERS", "NOT_RUNNABLE", "register_adapters"]
