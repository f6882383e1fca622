"""Seed 004 §3 as data: the provider taxonomy, the native support matrix, the transport registry,
and what corral knows about launching each harness.

Everything the resolution steps (``_resolve``) and the env builders (``_env``) decide comes from
these tables; ``docs/launch.md`` shows them and ``tests/unit/launch`` checks every cell.

corral's additions to the seed's tables: the vendor providers ``anthropic``, ``openai`` and
``google`` (the Direct API of one vendor, where ``api`` means "the harness's own vendor"), and
rows for qwen, pi, hermes, kilo and the ACP agents.
"""

from __future__ import annotations

from .._record import dataclass, field

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Literal

    Transport = Literal["anthropic", "openai-chat", "openai-responses", "google"]
    """A wire API (seed 004 §3.3); the same names as ``corral.proxy.Wire``."""
    Native = Literal["yes", "hack"]
    """``yes`` = ✅ built in; ``hack`` = ⚠️ works through an env var / compatible endpoint."""


TRANSPORTS: dict[str, tuple[str, str]] = {
    "anthropic": ("Anthropic Messages API", "POST /v1/messages (SSE streaming)"),
    "openai-chat": ("OpenAI Chat Completions", "POST /v1/chat/completions"),
    "openai-responses": ("OpenAI Responses API", "POST /v1/responses"),
    "google": ("Google GenerateContent", "POST /v1beta/models/:model:generateContent"),
}
"""Transport id → (description, endpoint format)."""


@dataclass(frozen=True)
class Provider:
    """One provider id of the taxonomy (seed 004 §3.1)."""

    id: str
    category: str
    wire: Transport | None
    """The provider's own wire API; None = the harness's vendor (``api``), per ``--transport``
    (``custom``) or none the proxy can use (``oauth``)."""
    proxy_kind: str | None
    """The ``corral.proxy`` profile kind that reaches it; None = the proxy cannot."""
    auth_env: tuple[str, ...] = ()
    """Any one of these set satisfies step 2.4; empty = no authentication needed."""
    needs_model: bool = False
    default_base: str | None = None


PROVIDERS: dict[str, Provider] = {
    p.id: p
    for p in (
        Provider("api", "Direct API", None, None),
        Provider("anthropic", "Direct API", "anthropic", "anthropic", ("ANTHROPIC_API_KEY",)),
        Provider("openai", "Direct API", "openai-responses", "openai", ("OPENAI_API_KEY",)),
        Provider("google", "Direct API", "google", "google", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
        Provider(
            "bedrock",
            "Cloud (AWS)",
            "anthropic",
            "bedrock",
            ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK"),
            needs_model=True,
        ),
        Provider(
            "vertex",
            "Cloud (GCP)",
            "google",
            "vertex",
            ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"),
            needs_model=True,
        ),
        Provider(
            "azure",
            "Cloud (Azure)",
            "openai-chat",
            "azure",
            ("AZURE_OPENAI_API_KEY",),
            needs_model=True,
        ),
        Provider(
            "foundry",
            "Cloud (Azure)",
            "openai-chat",
            "azure",
            ("ANTHROPIC_FOUNDRY_API_KEY", "AZURE_API_KEY"),
            needs_model=True,
        ),
        Provider("oauth", "OAuth", None, None),
        Provider(
            "local",
            "Local",
            "openai-chat",
            "openai-compatible",
            needs_model=True,
            default_base="http://127.0.0.1:8000/v1",
        ),
        Provider(
            "ollama",
            "Local",
            "openai-chat",
            "ollama",
            needs_model=True,
            default_base="http://127.0.0.1:11434/v1",
        ),
        Provider("custom", "Custom", None, "custom", needs_model=True),
    )
}
"""Provider id → its row. ``custom`` takes its wire from ``--transport``."""

# api means the harness's own vendor: which vendor provider that is.
VENDOR_API = {"anthropic": "anthropic", "openai-responses": "openai", "google": "google"}


@dataclass(frozen=True)
class Harness:
    """How corral launches one harness (its row of the matrix and its launch facts)."""

    name: str
    agent: str
    """The pinned agent name (``corral.agents.locate``) and the ``corral.redirect`` id."""
    transports: tuple[Transport, ...]
    """Wire APIs corral can point it at (a redirection exists); empty = cannot be redirected."""
    native: dict[str, tuple[Native, str]]
    """Provider id → (how well, how) for the cells that need no proxy."""
    native_custom: tuple[Transport, ...] = ()
    """Wires of a ``custom`` endpoint it speaks without a proxy."""
    prompt_before: tuple[str, ...] = ()
    """One-shot mode's subcommand (``exec``, ``run``), first on the command line."""
    prompt_flag: tuple[str, ...] | None = ("-p",)
    """Argv just before the prompt (the last argument); None = ``-p`` cannot be delivered."""
    resume: tuple[str, ...] | None = None
    """Argv before the session id for ``--resume``; None = cannot resume."""
    session_id: tuple[str, ...] | None = None
    """Argv before the id for ``--session-id``; None = not supported."""
    max_turns: tuple[str, ...] | None = None
    max_budget: tuple[str, ...] | None = None
    observe: tuple[str, ...] | None = None
    """Argv that makes one-shot output structured, for ``--observe``; None = cannot observe."""
    pty: bool = True
    """Interactive mode needs a terminal (a TUI)."""
    files: bool = False
    """Its redirection writes config files, so it runs with a launch home of its own."""
    install: str = ""
    acp: tuple[str, ...] | None = None
    """Argv that starts it as an ACP agent (an ``-acp`` harness)."""
    extra: dict[str, str] = field(default_factory=dict)


_CLAUDE_NATIVE: dict[str, tuple[Native, str]] = {
    "api": ("yes", "Anthropic API (ANTHROPIC_API_KEY)"),
    "anthropic": ("yes", "Anthropic API (ANTHROPIC_API_KEY)"),
    "bedrock": ("yes", "built in (CLAUDE_CODE_USE_BEDROCK)"),
    "vertex": ("yes", "built in (CLAUDE_CODE_USE_VERTEX)"),
    "foundry": ("yes", "built in (CLAUDE_CODE_USE_FOUNDRY)"),
    "oauth": ("yes", "browser login"),
    "ollama": ("hack", "via ANTHROPIC_BASE_URL"),
}
_OPENCODE_NATIVE: dict[str, tuple[Native, str]] = {
    "api": ("yes", "multi-provider (inferred from the environment)"),
    "anthropic": ("yes", "@ai-sdk/anthropic"),
    "openai": ("yes", "@ai-sdk/openai"),
    "google": ("yes", "@ai-sdk/google"),
    "bedrock": ("yes", "SDK (@ai-sdk/amazon-bedrock)"),
    "vertex": ("yes", "SDK (@ai-sdk/google-vertex)"),
    "azure": ("yes", "SDK (@ai-sdk/azure)"),
    "ollama": ("hack", "OpenAI-compatible provider"),
}
_OPENAI_COMPAT_NATIVE: dict[str, tuple[Native, str]] = {
    "api": ("yes", "its configured provider"),
    "local": ("hack", "OpenAI-compatible endpoint"),
    "ollama": ("hack", "OpenAI-compatible endpoint"),
}
_QWEN_NATIVE: dict[str, tuple[Native, str]] = {
    "api": ("yes", "OpenAI-compatible (OPENAI_API_KEY)"),
    "openai": ("yes", "--auth-type openai"),
    "oauth": ("yes", "Qwen OAuth login"),
    "local": ("hack", "OpenAI-compatible endpoint"),
    "ollama": ("hack", "OpenAI-compatible endpoint"),
}
_OWN_ONLY: dict[str, tuple[Native, str]] = {
    "api": ("yes", "its own configuration"),
    "oauth": ("yes", "its own login"),
}

HARNESSES: dict[str, Harness] = {
    h.name: h
    for h in (
        Harness(
            "claude",
            "claude",
            ("anthropic",),
            _CLAUDE_NATIVE,
            native_custom=("anthropic",),
            resume=("--resume",),
            session_id=("--session-id",),
            max_turns=("--max-turns",),
            max_budget=("--max-budget-usd",),
            observe=("--output-format", "stream-json", "--verbose"),
            install="corral agents install claude",
        ),
        Harness(
            "codex",
            "codex",
            ("openai-responses",),
            {
                "api": ("yes", "OpenAI API (OPENAI_API_KEY)"),
                "openai": ("yes", "OpenAI API (OPENAI_API_KEY)"),
                "oauth": ("yes", "codex login"),
                "ollama": ("yes", "--oss"),
            },
            native_custom=("openai-responses",),
            prompt_before=("exec",),
            prompt_flag=(),
            resume=("resume",),
            observe=("--json",),
            install="corral agents install codex",
        ),
        Harness(
            "gemini",
            "gemini",
            ("google",),
            {
                "api": ("yes", "Gemini API (GEMINI_API_KEY)"),
                "google": ("yes", "Gemini API (GEMINI_API_KEY)"),
                "vertex": ("yes", "ADC (GOOGLE_GENAI_USE_VERTEXAI)"),
                "oauth": ("yes", "browser login"),
            },
            native_custom=("google",),
            files=True,
            install="corral agents install gemini",
        ),
        Harness(
            "opencode",
            "opencode",
            ("openai-chat",),
            _OPENCODE_NATIVE,
            native_custom=("openai-chat",),
            prompt_before=("run",),
            prompt_flag=(),
            resume=("--session",),
            install="corral agents install opencode",
        ),
        Harness(
            "qwen",
            "qwen",
            ("openai-chat",),
            _QWEN_NATIVE,
            native_custom=("openai-chat",),
            resume=("--resume",),
            max_turns=("--max-session-turns",),
            observe=("--output-format", "stream-json"),
            files=True,
            install="corral agents install qwen",
        ),
        Harness(
            "pi",
            "pi",
            ("openai-chat",),
            {
                **_OPENAI_COMPAT_NATIVE,
                "anthropic": ("yes", "--provider anthropic"),
                "openai": ("yes", "--provider openai"),
                "google": ("yes", "--provider google"),
            },
            native_custom=("openai-chat",),
            resume=("--session",),
            files=True,
            install="corral agents install pi",
        ),
        Harness(
            "hermes",
            "hermes",
            ("openai-chat",),
            _OPENAI_COMPAT_NATIVE,
            native_custom=("openai-chat",),
            prompt_flag=("-z",),
            resume=("--resume",),
            files=True,
            install="corral agents install hermes",
        ),
        Harness(
            "kilo",
            "kilo",
            ("openai-chat",),
            {"api": ("yes", "its configured provider")},
            native_custom=("openai-chat",),
            prompt_before=("run",),
            prompt_flag=(),
            resume=("--session",),
            install="corral agents install kilo",
        ),
        Harness(
            "opencode-acp",
            "opencode",
            ("openai-chat",),
            _OPENCODE_NATIVE,
            native_custom=("openai-chat",),
            prompt_flag=None,
            pty=False,
            install="corral agents install opencode",
            acp=("acp",),
        ),
        Harness(
            "qwen-acp",
            "qwen",
            ("openai-chat",),
            _QWEN_NATIVE,
            native_custom=("openai-chat",),
            prompt_flag=None,
            pty=False,
            files=True,
            install="corral agents install qwen",
            acp=("--acp",),
        ),
        Harness(
            "copilot",
            "copilot",
            (),
            {"oauth": ("yes", "GitHub login")},
            install="npm i -g @github/copilot",
        ),
        Harness(
            "cursor",
            "cursor-agent",
            (),
            {"api": ("yes", "CURSOR_API_KEY"), "oauth": ("yes", "cursor-agent login")},
            install="see https://cursor.com/cli",
        ),
        Harness("amp", "amp", (), _OWN_ONLY, prompt_flag=("-x",), install="npm i -g @ampcode/cli"),
        Harness(
            "droid",
            "droid",
            (),
            _OWN_ONLY,
            prompt_before=("exec",),
            prompt_flag=(),
            install="npm i -g droid",
        ),
    )
}
"""Harness name → its row. Aliases: :data:`ALIASES`. A registered ACP agent not listed here is
launched with :func:`acp_harness` (its own configuration only)."""

ALIASES = {"claude-code": "claude", "cursor-agent": "cursor", "kilocode": "kilo"}

DEFAULT_TRANSPORT: dict[str, Transport] = {
    name: h.transports[0] for name, h in HARNESSES.items() if h.transports
}
"""Step 3.2: the wire each harness speaks by default."""


def acp_harness(name: str, command: tuple[str, ...]) -> Harness:
    """A registered ACP agent corral has no row for: launched as configured, never redirected."""
    return Harness(
        name,
        command[0],
        (),
        {"api": ("yes", "its own configuration")},
        prompt_flag=None,
        pty=False,
        acp=command[1:],
    )


def native_cell(
    harness: Harness, provider: str, custom_wire: str | None
) -> tuple[Native, str] | None:
    """Step 4.1: the matrix cell, or None when the pair needs a proxy."""
    if provider == "custom":
        if custom_wire in harness.native_custom:
            return ("yes", f"{harness.name} speaks {custom_wire} at a custom base URL")
        return None
    return harness.native.get(provider)
