"""Seed 004 §4 steps 5–7 as pure functions: the proxy's configuration, the harness's environment
and command line.

A harness pointed at an endpoint that is not its vendor's (the proxy, a custom, local or Ollama
base URL, ``--api-base``) goes through ``corral.redirect``; a native launch gets the provider's
own variables (``CLAUDE_CODE_USE_BEDROCK`` …). Without ``--home`` the harness keeps the user's
HOME and configuration, except harnesses whose redirection writes config files (gemini, qwen,
pi, hermes): those run with a launch home of their own (``<corral home>/launch/<harness>``) so
the user's files are never overwritten (decision 019).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .._record import dataclass, field
from ._errors import LaunchError
from ._options import LaunchOptions
from ._resolve import Resolution

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Any

PROXY_MODULE = "corral.launch._proxy_child"
UPSTREAM_KEY_ENV = "CORRAL_LAUNCH_UPSTREAM_KEY"
PROXY_URL_PLACEHOLDER = "http://127.0.0.1:<resolved-port>"
PROXY_TOKEN_PLACEHOLDER = "<proxy-token>"
_HOME_KEYS = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
)


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    api_key: str


@dataclass(frozen=True)
class HarnessLaunch:
    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    """Added to (and winning over) the caller's environment."""
    files: dict[Path, str] = field(default_factory=dict)
    dirs: tuple[Path, ...] = ()
    home: Path | None = None
    """The home the harness runs with, when not the user's."""
    unset: tuple[str, ...] = ()
    """Variables removed from the caller's environment (a user's own key must not reach the proxy)."""

    def apply(self) -> None:
        for directory in self.dirs:
            directory.mkdir(parents=True, exist_ok=True)
        for path, text in self.files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class ProxyConfig:
    profile: dict[str, Any]
    exposed: str
    port: int
    env: dict[str, str]
    """The proxy child's environment additions (its whole configuration)."""


def proxy_config(res: Resolution, opts: LaunchOptions, python: str = "python") -> ProxyConfig:
    """Step 5.2: the profile the proxy serves and the environment its process gets."""
    import json

    assert res.t_harness is not None and res.t_provider is not None
    env: dict[str, str] = {}
    if res.profile is not None:
        profile = dict(res.profile)
    else:
        kind = res.provider.proxy_kind or ""
        if kind == "custom":
            kind = {"anthropic": "anthropic", "google": "google"}.get(
                res.t_provider, "openai-compatible"
            )
        profile = {"provider": kind}
        if res.t_provider in ("openai-chat", "openai-responses") and kind != "azure":
            profile["wire"] = res.t_provider
        credentials: dict[str, Any] = {}
        if opts.api_key:
            credentials["api_key_env"] = UPSTREAM_KEY_ENV
            env[UPSTREAM_KEY_ENV] = opts.api_key
        if opts.auth_command:
            credentials["auth_command"] = opts.auth_command
        if res.provider.id == "vertex" and not credentials:
            credentials["adc"] = True
        if credentials:
            profile["credentials"] = [credentials]
        elif res.provider.auth_env and res.provider.id not in ("bedrock", "vertex"):
            profile["credentials"] = [{"api_key_env": res.provider.auth_env[0]}]
    overrides = {
        "model": res.model,
        "base_url": opts.api_base or (None if "base_url" in profile else res.provider.default_base),
        "region": opts.region,
        "project": opts.project,
        "resource": opts.resource_group,
        "deployment": opts.endpoint_name,
    }
    profile.update({k: v for k, v in overrides.items() if v is not None})
    env.update(
        {
            "CORRAL_PROXY_TARGET_PROVIDER": res.provider.id,
            "CORRAL_PROXY_TARGET_MODEL": str(res.model or ""),
            "CORRAL_PROXY_EXPOSED_TRANSPORT": res.t_harness,
            "CORRAL_PROXY_PORT": str(opts.proxy_port),
            "CORRAL_PROXY_LOG_LEVEL": opts.proxy_log_level,
            "CORRAL_PROXY_PROFILE_JSON": json.dumps(profile, separators=(",", ":")),
        }
    )
    if opts.region:
        env["AWS_REGION"] = opts.region
    return ProxyConfig(profile=profile, exposed=res.t_harness, port=opts.proxy_port, env=env)


def direct_endpoint(res: Resolution, opts: LaunchOptions, key: str | None) -> Endpoint | None:
    """A native launch that still needs a redirection: a custom, local or Ollama endpoint or an
    ``--api-base``. None = the harness's own vendor endpoint (or cloud switch)."""
    pid = res.provider.id
    if not res.harness.transports or (res.harness.name == "codex" and pid == "ollama"):
        return None
    base = opts.api_base or res.provider.default_base
    if pid in ("custom", "local", "ollama") or (opts.api_base and pid in ("api", *_VENDORS)):
        if base is None:
            raise LaunchError(
                "TRANSPORT_MISMATCH",
                transport=res.t_provider,
                harness=res.harness.name,
                provider=pid,
            )
        return Endpoint(base, key or "corral")
    return None


_VENDORS = ("anthropic", "openai", "google")


def harness_launch(
    res: Resolution,
    opts: LaunchOptions,
    *,
    binary: str,
    endpoint: Endpoint | None,
    launch_home: Path,
    key: str | None,
    via_proxy: bool,
) -> HarnessLaunch:
    """Steps 6–7: command, args and env of the harness. ``endpoint``: where to point it (the
    proxy's URL and token, or :func:`direct_endpoint`); ``key``: the provider key for a native
    launch; ``launch_home``: used when the harness must not touch the user's files."""
    h = res.harness
    env: dict[str, str] = {}
    argv: list[str] = []
    files: dict[Path, str] = {}
    dirs: tuple[Path, ...] = ()
    home: Path | None = None
    unset: tuple[str, ...] = ()
    if endpoint is not None:
        from ..redirect import redirect_for

        if not res.model:
            raise LaunchError("MODEL_NOT_SPECIFIED", provider=res.provider.id)
        chosen = opts.home or launch_home
        r = redirect_for(
            h.agent,
            base_url=endpoint.base_url,
            model=res.model,
            api_key=endpoint.api_key,
            home=chosen,
        )
        env.update(r.env)
        argv += r.argv
        if opts.home is None and not h.files:
            for name in _HOME_KEYS:
                env.pop(name, None)
        else:
            files, dirs, home = dict(r.files), tuple(r.dirs), chosen
        if via_proxy and h.agent == "claude":
            # A bearer token, not ANTHROPIC_API_KEY: Claude Code asks the user to approve every
            # new API key in interactive mode, and the proxy's token is new at every launch.
            env["ANTHROPIC_AUTH_TOKEN"] = env.pop("ANTHROPIC_API_KEY")
            unset = ("ANTHROPIC_API_KEY",)
    else:
        native_env, native_argv = native(res, opts, key)
        env.update(native_env)
        argv += native_argv
    args: list[str] = []
    one_shot = opts.prompt is not None
    if one_shot:
        args += h.prompt_before
    if opts.resume is not None and h.resume is not None:
        if h.resume[0] == "resume":  # a subcommand (codex)
            args += ["resume", opts.resume]
        else:
            argv += [*h.resume, opts.resume]
    if h.acp is not None:
        args += h.acp
    args += argv
    if opts.session_id is not None and h.session_id is not None:
        args += [*h.session_id, opts.session_id]
    if opts.max_turns is not None and h.max_turns is not None:
        args += [*h.max_turns, str(opts.max_turns)]
    if opts.max_budget_usd is not None and h.max_budget is not None:
        args += [*h.max_budget, str(opts.max_budget_usd)]
    if opts.observe and h.observe is not None and not _chose_format(opts.harness_args, h.observe):
        args += h.observe
    args += opts.harness_args
    if one_shot and h.prompt_flag is not None:
        args += [*h.prompt_flag, str(opts.prompt)]
    return HarnessLaunch(binary, tuple(args), env, files, dirs, home, unset)


def _chose_format(harness_args: tuple[str, ...], observe: tuple[str, ...]) -> bool:
    return observe[0] in harness_args


def native(
    res: Resolution, opts: LaunchOptions, key: str | None
) -> tuple[dict[str, str], list[str]]:
    """The environment and argv of a native launch (no redirection), per harness and provider."""
    import json

    h, pid, model = res.harness.name, res.provider.id, res.model
    env: dict[str, str] = {}
    argv: list[str] = []
    base = res.harness.agent
    if base == "claude":
        if pid == "bedrock":
            env["CLAUDE_CODE_USE_BEDROCK"] = "1"
            _put(env, "AWS_REGION", opts.region)
            _put(env, "AWS_BEARER_TOKEN_BEDROCK", key)
        elif pid == "vertex":
            env["CLAUDE_CODE_USE_VERTEX"] = "1"
            _put(env, "GOOGLE_CLOUD_PROJECT", opts.project)
            _put(env, "ANTHROPIC_VERTEX_PROJECT_ID", opts.project)
            _put(env, "GOOGLE_CLOUD_LOCATION", opts.region)
            _put(env, "CLOUD_ML_REGION", opts.region)
        elif pid == "foundry":
            env["CLAUDE_CODE_USE_FOUNDRY"] = "1"
            _put(env, "ANTHROPIC_FOUNDRY_RESOURCE", opts.resource_group or opts.endpoint_name)
            _put(env, "ANTHROPIC_FOUNDRY_API_KEY", key)
        elif pid in ("api", "anthropic"):
            _put(env, "ANTHROPIC_API_KEY", key)
        _put(env, "ANTHROPIC_MODEL", model)
    elif base == "codex":
        if pid == "ollama":
            argv.append("--oss")
        else:
            _put(env, "OPENAI_API_KEY", key)
        if model:
            argv += ["-m", model]
    elif base == "gemini":
        if pid == "vertex":
            env["GOOGLE_GENAI_USE_VERTEXAI"] = "true"
            _put(env, "GOOGLE_CLOUD_PROJECT", opts.project)
            _put(env, "GOOGLE_CLOUD_LOCATION", opts.region)
            _put(env, "GOOGLE_API_KEY", key)
        else:
            _put(env, "GEMINI_API_KEY", key)
        if model:
            argv += ["--model", model]
    elif base in ("opencode", "kilo"):
        prefix = "KILO" if base == "kilo" else "OPENCODE"
        npm = _OPENCODE_NPM.get(pid)
        if npm is not None and model:
            options: dict[str, str] = {}
            _put(options, "apiKey", key)
            _put(options, "baseURL", opts.api_base)
            _put(options, "region", opts.region)
            _put(options, "project", opts.project)
            _put(options, "resourceName", opts.resource_group)
            config = {
                "$schema": "https://opencode.ai/config.json",
                "provider": {
                    "resolved": {"npm": npm, "options": options, "models": {model: {"name": model}}}
                },
                "model": f"resolved/{model}",
            }
            env[f"{prefix}_CONFIG_CONTENT"] = json.dumps(config, separators=(",", ":"))
        elif model:
            argv += ["--model", model]
    elif base == "qwen":
        if pid == "oauth":
            argv += ["--auth-type", "qwen-oauth"]
        elif key or pid == "openai":
            argv += ["--auth-type", "openai"]
            _put(env, "OPENAI_API_KEY", key)
        _put(env, "OPENAI_MODEL", model)
    elif base == "pi":
        if pid in _VENDORS:
            argv += ["--provider", pid]
            _put(env, _VENDOR_KEY[pid], key)
        if model:
            argv += ["--model", model]
    elif base == "cursor-agent":
        _put(env, "CURSOR_API_KEY", key)
        if model:
            argv += ["--model", model]
    else:
        if key:
            raise LaunchError("OPTION_UNSUPPORTED", harness=h, option="--api-key")
        if model:
            argv += ["--model", model]
    return env, argv


_OPENCODE_NPM = {
    "anthropic": "@ai-sdk/anthropic",
    "openai": "@ai-sdk/openai",
    "google": "@ai-sdk/google",
    "bedrock": "@ai-sdk/amazon-bedrock",
    "vertex": "@ai-sdk/google-vertex",
    "azure": "@ai-sdk/azure",
}
_VENDOR_KEY = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "google": "GEMINI_API_KEY",
}


def _put(target: dict[str, str], name: str, value: str | None) -> None:
    if value:
        target[name] = value


def provider_key(
    opts: LaunchOptions, profile: Mapping[str, Any] | None, env: Mapping[str, str]
) -> str | None:
    """The provider key for a native launch: ``--api-key``, else the profile's first credential."""
    if opts.api_key:
        return opts.api_key
    for cred in (profile or {}).get("credentials") or []:
        if isinstance(cred, dict):
            if cred.get("api_key"):
                return str(cred["api_key"])
            if cred.get("api_key_env") and env.get(str(cred["api_key_env"])):
                return env[str(cred["api_key_env"])]
    return None
