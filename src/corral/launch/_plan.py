"""The resolved launch plan: steps 1–7 put together, and its ``--dry-run`` JSON (seed 004 §6).

:func:`build_plan` is pure: the environment, the profile, the binary's location and the launch
home are its inputs. Secrets are redacted from the JSON by :func:`redacted`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from .._record import dataclass
from ._env import (
    PROXY_MODULE,
    PROXY_TOKEN_PLACEHOLDER,
    PROXY_URL_PLACEHOLDER,
    Endpoint,
    HarnessLaunch,
    ProxyConfig,
    direct_endpoint,
    harness_launch,
    provider_key,
    proxy_config,
)
from ._options import LaunchOptions
from ._resolve import Resolution, resolve

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Any

    from ..agents._native import Native

    NativeLookup = Callable[[str, Mapping[str, str]], Native | None]

MARK = "[REDACTED]"
_SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "APIKEY")
MIN_SECRET_LEN = 8


@dataclass(frozen=True)
class Plan:
    options: LaunchOptions
    resolution: Resolution
    harness: HarnessLaunch
    proxy: ProxyConfig | None
    installed: bool
    secrets: tuple[str, ...]
    """Values to mask wherever they appear (keys, the proxy token)."""

    @property
    def needs_proxy(self) -> bool:
        return self.proxy is not None

    def to_json(self) -> dict[str, Any]:
        """Seed 004 §6's plan, plus corral's fields (mode, pty, home, installed)."""
        res, opts = self.resolution, self.options
        out: dict[str, Any] = {
            "harness": res.harness.name,
            "provider": res.provider.id,
            "transport": res.t_harness,
            "providerTransport": res.t_provider,
            "model": res.model,
            "proxyNeeded": self.proxy is not None,
            "proxyReason": res.reason,
        }
        if self.proxy is not None:
            out["proxy"] = {
                "targetProvider": res.provider.id,
                "targetModel": res.model,
                "exposedTransport": self.proxy.exposed,
                "port": self.proxy.port,
                "command": f"{sys.executable} -m {PROXY_MODULE}",
                "env": dict(self.proxy.env),
            }
        out |= {
            "command": self.harness.command,
            "args": list(self.harness.args),
            "env": dict(self.harness.env),
            "unsetEnv": list(self.harness.unset),
            "harnessArgs": list(opts.harness_args),
            "mode": "interactive" if opts.interactive else "non-interactive",
            "pty": opts.interactive and res.harness.pty,
            "home": str(self.harness.home) if self.harness.home else None,
            "files": {str(p): text for p, text in sorted(self.harness.files.items())},
            "installed": self.installed,
            "observe": opts.observe,
        }
        result: dict[str, Any] = redacted(out, self.secrets)
        return result


def redacted(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """``value`` (JSON data) with secret-named env values and every known secret masked.

    Kept local so that the launcher imports nothing heavy; corral's ``_redact`` applies the same
    two rules (names ending in ``_KEY``/``_TOKEN``/…, and known values wherever they appear)."""
    known = sorted((s for s in secrets if s and len(s) >= MIN_SECRET_LEN), key=len, reverse=True)

    def text(s: str) -> str:
        for secret in known:
            s = s.replace(secret, MARK)
        return s

    def walk(v: Any, key: str = "") -> Any:
        if isinstance(v, dict):
            return {k: walk(item, str(k)) for k, item in v.items()}
        if isinstance(v, list):
            return [walk(item) for item in v]
        if isinstance(v, str):
            if (
                key.upper().endswith(_SECRET_SUFFIXES)
                and v not in (PROXY_TOKEN_PLACEHOLDER,)
                and len(v) >= 1
            ):
                return MARK
            return text(v)
        return v

    return walk(value)


def build_plan(
    opts: LaunchOptions,
    env: Mapping[str, str],
    *,
    locate: Callable[[str], str | None],
    launch_home: Path,
    profile: dict[str, Any] | None = None,
    registered: Mapping[str, str] | None = None,
    adc_present: bool = False,
    proxy_endpoint: Endpoint | None = None,
    native: NativeLookup | None = None,
) -> Plan:
    """Steps 1–7 without side effects. ``proxy_endpoint``: the running proxy's URL and token
    (None for ``--dry-run``: placeholders are shown). ``native``: the native executable behind
    the located binary's wrapper (:func:`corral.agents._native.native_entry`, decision 038)."""
    res = resolve(opts, env, profile, registered, adc_present)
    found = locate(res.harness.agent)
    key = provider_key(opts, profile, env)
    proxy = proxy_config(res, opts) if res.proxy != "SKIP" else None
    if proxy is not None:
        endpoint: Endpoint | None = proxy_endpoint or Endpoint(
            PROXY_URL_PLACEHOLDER, PROXY_TOKEN_PLACEHOLDER
        )
    else:
        endpoint = direct_endpoint(res, opts, key)
    launch = harness_launch(
        res,
        opts,
        binary=found or res.harness.agent,
        endpoint=endpoint,
        launch_home=launch_home / res.harness.name,
        key=key,
        via_proxy=proxy is not None,
    )
    entry = native(found, env) if native is not None and found is not None else None
    if entry is not None:
        from .._record import replace

        launch = replace(
            launch,
            command=entry.command,
            env=launch.env | entry.env,
            unset=(*launch.unset, *(n for n in entry.unset if n not in launch.unset)),
        )
    secrets = tuple(
        s
        for s in (
            key,
            opts.api_key,
            proxy_endpoint.api_key if proxy_endpoint else None,
        )
        if s
    )
    return Plan(opts, res, launch, proxy, found is not None, secrets)
