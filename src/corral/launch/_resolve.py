"""Seed 004 §4 steps 1–4 as pure functions: harness, provider, transport, proxy necessity.

Each step takes the options and what it needs to know about the world as arguments (the
environment, the loaded profile, where a binary is) and returns a value or raises a
:class:`LaunchError`; :func:`resolve` chains them into a :class:`Resolution`. Nothing here starts
a process or reads a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .._record import dataclass
from ._errors import LaunchError
from ._options import LaunchOptions
from ._tables import (
    ALIASES,
    DEFAULT_TRANSPORT,
    HARNESSES,
    PROVIDERS,
    TRANSPORTS,
    VENDOR_API,
    Harness,
    Provider,
    native_cell,
)

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Any, Literal

    ProxyDecision = Literal["SKIP", "FORCE", "REQUIRED"]


# harnesses whose `api` is one vendor's API (others are multi-provider: their own configuration)
_VENDOR_HARNESSES = ("claude", "codex", "gemini")

# proxy profile kind → provider id (a profile from providers.json names its provider this way)
_KIND_TO_PROVIDER = {
    "anthropic": "anthropic",
    "openai": "openai",
    "openai-compatible": "custom",
    "ollama": "ollama",
    "google": "google",
    "bedrock": "bedrock",
    "vertex": "vertex",
    "azure": "azure",
}


@dataclass(frozen=True)
class Resolution:
    harness: Harness
    provider: Provider
    provider_given: bool
    t_harness: str | None
    t_provider: str | None
    model: str | None
    proxy: ProxyDecision
    reason: str
    native_how: str | None
    profile: dict[str, Any] | None


def validate_harness(name: str, registered: Mapping[str, str] | None = None) -> Harness:
    """Step 1. ``registered``: other adapter ids the registry knows → their kind (``acp`` for an
    ACP agent, else the adapter type)."""
    key = ALIASES.get(name, name)
    if key in HARNESSES:
        return HARNESSES[key]
    if registered and name in registered:
        kind = registered[name]
        from ._tables import acp_harness

        if kind.startswith("acp:"):
            return acp_harness(name, tuple(kind.removeprefix("acp:").split()))
        raise LaunchError("HARNESS_NOT_LAUNCHABLE", harness=name, type=kind)
    acp = (k for k, kind in (registered or {}).items() if kind.startswith("acp:"))
    known = sorted({*HARNESSES, *acp})  # only what can be launched
    raise LaunchError("HARNESS_NOT_FOUND", name=name, list=", ".join(known))


def resolve_provider(
    harness: Harness,
    opts: LaunchOptions,
    env: Mapping[str, str],
    profile: dict[str, Any] | None = None,
    adc_present: bool = False,
) -> tuple[Provider, bool]:
    """Step 2: the provider row, and whether one was asked for (else the harness default)."""
    pid = opts.provider
    if profile is not None:
        kind = str(profile.get("provider", ""))
        from_profile = _KIND_TO_PROVIDER.get(kind)
        if from_profile is None:
            raise LaunchError(
                "PROFILE_INVALID", profile=opts.profile, error=f"unknown provider kind {kind!r}"
            )
        if (
            pid is not None
            and pid != from_profile
            and not (
                pid == "api"
                and from_profile == VENDOR_API.get(DEFAULT_TRANSPORT.get(harness.name, ""))
            )
        ):
            raise LaunchError(
                "PROFILE_INVALID",
                profile=opts.profile,
                error=f"it is a {kind} profile, not provider {pid!r}",
            )
        pid = pid or from_profile
    given = pid is not None
    pid = pid or "api"
    if pid not in PROVIDERS:
        raise LaunchError("PROVIDER_NOT_FOUND", provider=pid, list=", ".join(PROVIDERS))
    provider = PROVIDERS[pid]
    if given:
        checked = provider
        if pid == "api" and harness.name in _VENDOR_HARNESSES:
            # `api` named explicitly: the harness's own vendor key (a login is `oauth`)
            checked = PROVIDERS[VENDOR_API[DEFAULT_TRANSPORT[harness.name]]]
        check_auth(checked, opts, env, profile, adc_present, shown=pid)
    if provider.needs_model and not (opts.model or (profile or {}).get("model")):
        raise LaunchError("MODEL_NOT_SPECIFIED", provider=pid)
    return provider, given


def check_auth(
    provider: Provider,
    opts: LaunchOptions,
    env: Mapping[str, str],
    profile: dict[str, Any] | None,
    adc_present: bool,
    shown: str | None = None,
) -> None:
    """Step 2.4: a key flag, an auth command, profile credentials or one of the provider's env vars."""
    if not provider.auth_env or opts.api_key or opts.auth_command:
        return
    if profile is not None and profile.get("credentials"):
        return
    if any(env.get(name) for name in provider.auth_env):
        return
    if provider.id == "vertex" and adc_present:
        return
    raise LaunchError(
        "AUTH_MISSING", provider=shown or provider.id, envVar=" or ".join(provider.auth_env)
    )


def resolve_transport(
    harness: Harness,
    provider: Provider,
    opts: LaunchOptions,
    model: str | None,
    profile: Mapping[str, Any] | None = None,
) -> tuple[str | None, str | None]:
    """Step 3: (T_harness, T_provider). For ``custom``, ``--transport`` is the endpoint's wire."""
    known = ", ".join(TRANSPORTS)
    if opts.transport is not None and opts.transport not in TRANSPORTS:
        raise LaunchError(
            "TRANSPORT_MISMATCH",
            transport=opts.transport,
            harness=harness.name,
            provider=provider.id,
        )
    t_harness = DEFAULT_TRANSPORT.get(harness.name) if harness.transports else None
    if provider.id == "custom":
        wire = opts.transport
        if wire is None and profile is not None:
            wire = str(profile.get("wire") or "openai-chat")
        if wire is None:
            raise LaunchError("TRANSPORT_REQUIRED", list=known)
        return t_harness, wire
    if opts.transport is not None:
        if opts.transport not in harness.transports:
            raise LaunchError(
                "TRANSPORT_MISMATCH",
                transport=opts.transport,
                harness=harness.name,
                provider=provider.id,
            )
        t_harness = opts.transport
    if provider.id == "api":
        t_provider = t_harness
    elif provider.id == "vertex":
        t_provider = "anthropic" if (model or "").startswith("claude") else "google"
    else:
        t_provider = provider.wire
    return t_harness, t_provider


def decide_proxy(
    harness: Harness,
    provider: Provider,
    opts: LaunchOptions,
    t_harness: str | None,
    t_provider: str | None,
) -> tuple[ProxyDecision, str, str | None]:
    """Step 4: (decision, reason, how the harness does it natively)."""
    cell = native_cell(harness, provider.id, t_provider)
    if cell is not None:
        how = cell[1]
        if opts.with_proxy:
            _proxy_possible(harness, provider, t_harness)
            return "FORCE", f"{harness.name} supports {provider.id} natively; --with-proxy", how
        return (
            "SKIP",
            f"Proxy not needed: {harness.name} speaks {provider.id} natively ({how})",
            how,
        )
    if opts.no_proxy:
        raise LaunchError("PROXY_REQUIRED", harness=harness.name, provider=provider.id)
    if not (opts.with_proxy_if_needed or opts.with_proxy):
        raise LaunchError("PROVIDER_UNSUPPORTED", harness=harness.name, provider=provider.id)
    _proxy_possible(harness, provider, t_harness)
    reason = (
        f"{harness.name} does not support {provider.id} natively; "
        f"proxy bridges {provider.id} ({t_provider}) → {t_harness}"
    )
    return "REQUIRED", reason, None


def _proxy_possible(harness: Harness, provider: Provider, t_harness: str | None) -> None:
    if not harness.transports or t_harness is None:
        raise LaunchError(
            "PROXY_UNAVAILABLE",
            harness=harness.name,
            provider=provider.id,
            reason=f"corral cannot point {harness.name} at another endpoint",
        )
    if provider.proxy_kind is None:
        reason = (
            "its credentials live in the harness (a login)"
            if provider.id == "oauth"
            else "'api' is the harness's own vendor; name the provider (anthropic, openai, google)"
        )
        raise LaunchError(
            "PROXY_UNAVAILABLE", harness=harness.name, provider=provider.id, reason=reason
        )


def check_session_and_mode(harness: Harness, opts: LaunchOptions) -> None:
    """Step 7.2–7.3 preconditions: options the harness cannot honour are refused by name."""
    if opts.resume is not None and harness.resume is None:
        raise LaunchError("RESUME_NOT_SUPPORTED", harness=harness.name)
    checks = (
        (opts.session_id is not None and harness.session_id is None, "--session-id"),
        (opts.max_turns is not None and harness.max_turns is None, "--max-turns"),
        (opts.max_budget_usd is not None and harness.max_budget is None, "--max-budget-usd"),
        (opts.prompt is not None and harness.prompt_flag is None, "--prompt"),
        (opts.observe and opts.prompt is None, "--observe in interactive mode"),
        (opts.observe and harness.observe is None, "--observe"),
    )
    for failed, option in checks:
        if failed:
            raise LaunchError("OPTION_UNSUPPORTED", harness=harness.name, option=option)


def resolve(
    opts: LaunchOptions,
    env: Mapping[str, str],
    profile: dict[str, Any] | None = None,
    registered: Mapping[str, str] | None = None,
    adc_present: bool = False,
) -> Resolution:
    """Steps 1–4 and the option checks, in the seed's order."""
    if sum((opts.no_proxy, opts.with_proxy or opts.with_proxy_if_needed)) > 1:
        raise ValueError("--no-proxy cannot be combined with --with-proxy/--with-proxy-if-needed")
    harness = validate_harness(opts.harness, registered)
    provider, given = resolve_provider(harness, opts, env, profile, adc_present)
    model = opts.model or (profile or {}).get("model")
    t_harness, t_provider = resolve_transport(harness, provider, opts, model, profile)
    decision, reason, how = decide_proxy(harness, provider, opts, t_harness, t_provider)
    if decision != "SKIP" and not model:
        raise LaunchError("MODEL_NOT_SPECIFIED", provider=provider.id)
    check_session_and_mode(harness, opts)
    return Resolution(
        harness=harness,
        provider=provider,
        provider_given=given,
        t_harness=t_harness,
        t_provider=t_provider,
        model=model,
        proxy=decision,
        reason=reason,
        native_how=how,
        profile=profile,
    )


Locate = Callable[[str], str | None]
