"""Outbound providers: for a profile, the wire API to speak and the HTTP request to send.

``build_call`` is pure given its inputs (body, secret, clock), so URL, headers and signing are
tested with fixed credentials and a frozen clock. Bedrock is signed with botocore's SigV4 signer,
Vertex uses a google-auth ADC token (or a credential's key / auth command), Azure sends
``api-key`` or, for an AD token from an auth command, ``Authorization: Bearer``. Bedrock is
called without streaming (its stream is AWS event-stream, not SSE); the proxy streams the whole
answer to a streaming client as events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ..errors import ConfigError
from ._config import Profile
from ._credentials import Secret
from ._ir import Wire
from ._sse import encode

ANTHROPIC_VERSION = "2023-06-01"
_DEFAULT_BASE = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "ollama": "http://127.0.0.1:11434/v1",
    "google": "https://generativelanguage.googleapis.com",
}
# Headers a client sends that go on to an upstream of the same family unchanged.
FORWARDED = {
    "anthropic": ("anthropic-beta", "anthropic-version"),
    "openai-chat": ("openai-organization", "openai-project"),
    "openai-responses": ("openai-organization", "openai-project"),
    "google": (),
}


@dataclass(frozen=True)
class Call:
    method: str
    url: str
    headers: dict[str, str]
    content: bytes
    stream: bool
    """Whether the upstream answers with SSE."""


@dataclass(frozen=True)
class Target:
    wire: Wire
    model: str
    stream_capable: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def target(profile: Profile, client_model: str) -> Target:
    tgt = _target(profile, profile.model or client_model)
    if not profile.stream:
        return Target(tgt.wire, tgt.model, stream_capable=False)
    return tgt


def _target(profile: Profile, model: str) -> Target:
    kind = profile.provider
    if kind in ("anthropic",):
        return Target("anthropic", model)
    if kind in ("openai", "openai-compatible", "ollama", "azure"):
        wire = profile.wire or "openai-chat"
        if wire not in ("openai-chat", "openai-responses"):
            raise ConfigError(f"provider {kind} speaks openai-chat or openai-responses, not {wire}")
        return Target(wire, model)
    if kind == "google":
        return Target("google", model)
    if kind == "bedrock":
        return Target("anthropic", model, stream_capable=False)
    if kind == "vertex":
        return Target("anthropic" if model.startswith("claude") else "google", model)
    raise ConfigError(f"unknown provider kind {kind!r}")


def check_profile(profile: Profile) -> None:
    """Refuse, before serving, a profile that could never build a request (``ConfigError``)."""
    tgt = target(profile, profile.model or "model")
    kind = profile.provider
    if kind == "openai-compatible" and not profile.base_url:
        raise ConfigError("an openai-compatible profile needs base_url")
    if kind == "bedrock" and not profile.region:
        raise ConfigError("a bedrock profile needs region")
    if kind == "vertex" and not (profile.project and profile.region):
        raise ConfigError("a vertex profile needs project and region")
    if kind == "azure" and not (profile.resource or profile.base_url):
        raise ConfigError("an azure profile needs resource or base_url")
    if kind in ("bedrock", "vertex") and profile.model is None:
        raise ConfigError(f"a {kind} profile needs model (client model names are not {kind} ids)")
    del tgt


def build_call(
    profile: Profile,
    tgt: Target,
    body: dict[str, Any],
    stream: bool,
    secret: Secret | None,
    client_headers: Mapping[str, str],
    client_wire: Wire,
    now: Any = None,
) -> Call:
    stream = stream and tgt.stream_capable
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream" if stream else "application/json",
    }
    if client_wire == tgt.wire or (client_wire, tgt.wire) in _SAME_FAMILY:
        for name in FORWARDED.get(tgt.wire, ()):
            if name in client_headers:
                headers[name] = client_headers[name]
    headers.update(profile.headers)
    key = secret.value if secret is not None else None
    kind = profile.provider
    if kind == "anthropic":
        headers.setdefault("anthropic-version", ANTHROPIC_VERSION)
        if key:
            headers["x-api-key"] = key
        url = _base(profile) + "/v1/messages"
        return Call("POST", url, headers, _json(body), stream)
    if kind in ("openai", "openai-compatible", "ollama"):
        if kind == "openai-compatible" and not profile.base_url:
            raise ConfigError("an openai-compatible profile needs base_url")
        if key:
            headers["authorization"] = f"Bearer {key}"
        path = "/chat/completions" if tgt.wire == "openai-chat" else "/responses"
        return Call("POST", _base(profile) + path, headers, _json(body), stream)
    if kind == "google":
        if key:
            headers["x-goog-api-key"] = key
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        url = f"{_base(profile)}/v1beta/models/{quote(tgt.model, safe='')}:{method}"
        return Call("POST", url, headers, _json(body), stream)
    if kind == "azure":
        return _azure(profile, tgt, body, stream, secret, headers)
    if kind == "vertex":
        return _vertex(profile, tgt, body, stream, key, headers)
    if kind == "bedrock":
        return _bedrock(profile, tgt, body, secret, headers, now)
    raise ConfigError(f"unknown provider kind {kind!r}")


_SAME_FAMILY = {("openai-chat", "openai-responses"), ("openai-responses", "openai-chat")}


def _json(body: dict[str, Any]) -> bytes:
    return encode(body)


def _base(profile: Profile) -> str:
    base = profile.base_url or _DEFAULT_BASE.get(profile.provider)
    if not base:
        raise ConfigError(f"profile {profile.name!r} needs base_url")
    return base.rstrip("/")


def _azure(
    profile: Profile,
    tgt: Target,
    body: dict[str, Any],
    stream: bool,
    secret: Secret | None,
    headers: dict[str, str],
) -> Call:
    if secret is not None and secret.value:
        # An auth command yields an Entra ID (AD) token; an inline or env key is an API key.
        if secret.credential.auth_command:
            headers["authorization"] = f"Bearer {secret.value}"
        else:
            headers["api-key"] = secret.value
    if profile.base_url:
        root = profile.base_url.rstrip("/")
    elif profile.resource:
        root = f"https://{profile.resource}.openai.azure.com/openai"
    else:
        raise ConfigError("an azure profile needs resource or base_url")
    path = "chat/completions" if tgt.wire == "openai-chat" else "responses"
    if profile.deployment:
        version = profile.api_version or "2024-10-21"
        url = (
            f"{root}/deployments/{quote(profile.deployment, safe='')}/{path}?api-version={version}"
        )
    else:
        url = f"{root}/v1/{path}"
    return Call("POST", url, headers, _json(body), stream)


def _vertex(
    profile: Profile,
    tgt: Target,
    body: dict[str, Any],
    stream: bool,
    token: str | None,
    headers: dict[str, str],
) -> Call:
    if not profile.project or not profile.region:
        raise ConfigError("a vertex profile needs project and region")
    if token:
        headers["authorization"] = f"Bearer {token}"
    host = (
        "aiplatform.googleapis.com"
        if profile.region == "global"
        else f"{profile.region}-aiplatform.googleapis.com"
    )
    root = profile.base_url.rstrip("/") if profile.base_url else f"https://{host}"
    prefix = f"{root}/v1/projects/{profile.project}/locations/{profile.region}/publishers"
    model = quote(tgt.model, safe="@")
    if tgt.wire == "anthropic":
        body = {k: v for k, v in body.items() if k != "model"} | {
            "anthropic_version": "vertex-2023-10-16"
        }
        method = "streamRawPredict" if stream else "rawPredict"
        return Call(
            "POST", f"{prefix}/anthropic/models/{model}:{method}", headers, _json(body), stream
        )
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return Call("POST", f"{prefix}/google/models/{model}:{method}", headers, _json(body), stream)


def _bedrock(
    profile: Profile,
    tgt: Target,
    body: dict[str, Any],
    secret: Secret | None,
    headers: dict[str, str],
    now: Any,
) -> Call:
    if not profile.region:
        raise ConfigError("a bedrock profile needs region")
    try:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
    except ImportError as exc:
        raise ConfigError(
            "the bedrock provider needs botocore (pip install 'corral[proxy-cloud]')"
        ) from exc
    payload = {k: v for k, v in body.items() if k not in ("model", "stream")}
    payload["anthropic_version"] = "bedrock-2023-05-31"
    root = (
        profile.base_url.rstrip("/")
        if profile.base_url
        else f"https://bedrock-runtime.{profile.region}.amazonaws.com"
    )
    url = f"{root}/model/{quote(tgt.model, safe='')}/invoke"
    content = _json(payload)
    headers = {k: v for k, v in headers.items() if k not in ("anthropic-version", "anthropic-beta")}
    headers["accept"] = "application/json"
    cred = secret.credential if secret is not None else None
    if cred is not None and cred.aws_access_key_id and cred.aws_secret_access_key:
        creds = Credentials(
            cred.aws_access_key_id, cred.aws_secret_access_key, cred.aws_session_token
        )
    elif secret is not None and secret.value:
        # Bedrock API keys are bearer tokens.
        headers["authorization"] = f"Bearer {secret.value}"
        return Call("POST", url, headers, content, False)
    else:
        import botocore.session

        found = botocore.session.get_session().get_credentials()
        if found is None:
            raise ConfigError("no AWS credentials for bedrock (profile credentials, env or ~/.aws)")
        creds = found.get_frozen_credentials()
    request = AWSRequest(method="POST", url=url, data=content, headers=headers)
    signer = SigV4Auth(creds, "bedrock", profile.region)
    if now is not None:
        import botocore.auth

        original = botocore.auth.get_current_datetime
        botocore.auth.get_current_datetime = lambda *a, **k: now
        try:
            signer.add_auth(request)
        finally:
            botocore.auth.get_current_datetime = original
    else:
        signer.add_auth(request)
    signed = {k.lower(): str(v) for k, v in request.headers.items()}
    return Call("POST", url, signed, content, False)


def adc_token() -> str:
    """A Google access token from Application Default Credentials (blocking; call in a thread)."""
    try:
        import google.auth
        import google.auth.transport.requests
    except ImportError as exc:
        raise ConfigError(
            "the vertex provider needs google-auth (pip install 'corral[proxy-cloud]')"
        ) from exc
    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    credentials.refresh(google.auth.transport.requests.Request())  # type: ignore[no-untyped-call]
    return str(credentials.token)
