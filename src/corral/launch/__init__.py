"""The unified launcher (seed 004): any harness, interactive or one-shot, against any provider,
with the translating proxy only when the harness cannot speak the provider natively.

    >>> from corral.launch import LaunchOptions, plan_for
    >>> plan = plan_for(LaunchOptions("codex", "bedrock", model="anthropic.claude-sonnet-4",
    ...                               region="us-west-2", with_proxy_if_needed=True), env)
    >>> plan.to_json()["proxyNeeded"]
    True

Modules: ``_tables`` (seed §3 as data), ``_resolve`` (steps 1–4, pure), ``_env`` (steps 5–7,
pure), ``_plan`` (the plan and its dry-run JSON), ``_proxy`` / ``_proxy_child`` (the proxy
process), ``_runner`` (terminal passthrough, PTY, signals), ``_observe`` (``--observe``),
``_launch`` (all of it), ``_errors`` (the catalog). See ``docs/launch.md``.
"""

from ._errors import CATALOG, LaunchError
from ._launch import launch, plan_for
from ._options import LaunchOptions
from ._plan import Plan, build_plan
from ._tables import HARNESSES, PROVIDERS, TRANSPORTS

__all__ = [
    "CATALOG",
    "HARNESSES",
    "PROVIDERS",
    "TRANSPORTS",
    "LaunchError",
    "LaunchOptions",
    "Plan",
    "build_plan",
    "launch",
    "plan_for",
]
