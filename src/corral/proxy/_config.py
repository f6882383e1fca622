"""Provider profiles (``providers.json`` in the corral home) and the proxy's settings.

A profile names a provider kind, where it lives and one or more credentials::

    {"profiles": {"work-openai": {
        "provider": "openai", "wire": "openai-chat", "model": "gpt-5",
        "credentials": [{"label": "a", "api_key_env": "OPENAI_KEY_A"},
                        {"label": "b", "auth_command": "vault read -field=key openai/b"}],
        "prices": {"input_per_mtok": 1.25, "output_per_mtok": 10.0}}}}

Secrets are never stored by the proxy: a credential names an environment variable, a command
that prints a short-lived token (cached for ``ttl`` seconds), or holds the key inline.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any, Literal

import msgspec

from .._paths import home_dir
from ..errors import ConfigError
from ._ir import WIRES, Wire

ProviderKind = Literal[
    "anthropic", "openai", "openai-compatible", "ollama", "google", "bedrock", "vertex", "azure"
]
"""Where requests go.

- ``anthropic``: the Anthropic API (Messages).
- ``openai``: the OpenAI API (Chat Completions or Responses, per ``wire``).
- ``openai-compatible``: any server speaking OpenAI's Chat (or Responses) at ``base_url``.
- ``ollama``: a local Ollama (its OpenAI-compatible ``/v1``), no key.
- ``google``: Google AI Studio (GenerateContent).
- ``bedrock``: AWS Bedrock ``InvokeModel`` with Anthropic models, SigV4-signed.
- ``vertex``: Google Vertex AI (Gemini, or Anthropic models via ``rawPredict``), ADC token.
- ``azure``: Azure OpenAI / Foundry deployments, ``api-key`` or an AD bearer token.
"""

PROVIDER_KINDS: tuple[str, ...] = (
    "anthropic",
    "openai",
    "openai-compatible",
    "ollama",
    "google",
    "bedrock",
    "vertex",
    "azure",
)


class Credential(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    label: str = ""
    api_key: str | None = None
    api_key_env: str | None = None
    auth_command: str | None = None
    """A shell command whose stdout (stripped) is the key or token."""
    ttl: float = 300.0
    """Seconds an ``auth_command`` result is reused."""
    aws_access_key_id: str | None = None
    aws_secret_access_key: str | None = None
    aws_session_token: str | None = None
    adc: bool = False
    """Vertex: use Google Application Default Credentials (google-auth)."""


class Prices(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0
    cache_read_per_mtok: float = 0.0


class Profile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    provider: ProviderKind
    name: str = ""
    base_url: str | None = None
    wire: Wire | None = None
    """The API to speak to an OpenAI-family provider (``openai-chat`` or ``openai-responses``)."""
    model: str | None = None
    """Target model; None passes the client's model name through."""
    region: str | None = None
    project: str | None = None
    resource: str | None = None
    """Azure resource name (``https://<resource>.openai.azure.com``)."""
    deployment: str | None = None
    api_version: str | None = None
    credentials: list[Credential] = msgspec.field(default_factory=list)
    prices: Prices | None = None
    stream: bool = True
    """Ask the upstream to stream; False for servers that cannot (the proxy still streams to a
    client that asked, replaying the whole answer as events)."""
    timeout: float = 600.0
    """Seconds to wait for upstream bytes (connect, first byte, between chunks)."""
    headers: dict[str, str] = msgspec.field(default_factory=dict)


class ProxySettings(msgspec.Struct, frozen=True):
    """Everything one proxy instance needs. ``token`` is generated when not given."""

    profile: Profile
    token: str = msgspec.field(default_factory=lambda: secrets.token_urlsafe(24))
    host: str = "127.0.0.1"
    port: int = 0
    usage_log: str | None = None
    """Path of the JSONL usage log; None = ``<corral home>/proxy-usage.jsonl``; "" = off."""
    max_retry_wait: float = 20.0
    """Longest ``retry-after`` the proxy waits out itself before answering with the 429."""
    models: list[str] = msgspec.field(default_factory=list)
    """Names the models listing shows (default: the profile's model, or ``corral-proxy``)."""

    def usage_path(self) -> Path | None:
        if self.usage_log == "":
            return None
        return Path(self.usage_log) if self.usage_log else home_dir() / "proxy-usage.jsonl"


def providers_path() -> Path:
    return home_dir() / "providers.json"


def load_profiles(path: Path | None = None) -> dict[str, Profile]:
    path = path or providers_path()
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    raw = data.get("profiles") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise ConfigError(f'{path}: expected {{"profiles": {{name: profile}}}}')
    return {name: parse_profile(value, name, str(path)) for name, value in raw.items()}


def parse_profile(value: Any, name: str = "", origin: str = "<profile>") -> Profile:
    try:
        profile = msgspec.convert(
            value | {"name": name} if isinstance(value, dict) else value, Profile
        )
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{origin}: profile {name!r}: {exc}") from exc
    if profile.wire is not None and profile.wire not in WIRES:
        raise ConfigError(f"profile {name!r}: unknown wire {profile.wire!r}")
    return profile


def load_profile(name: str, path: Path | None = None) -> Profile:
    profiles = load_profiles(path)
    if name not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise ConfigError(
            f"no provider profile {name!r} in {path or providers_path()} (known: {known})"
        )
    return profiles[name]
