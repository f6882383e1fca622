"""The launcher's options, as one typed value (every flag of seed 004 §2)."""

from __future__ import annotations

from pathlib import Path

from .._record import dataclass, field


@dataclass(frozen=True)
class LaunchOptions:
    harness: str
    provider: str | None = None
    # provider configuration
    model: str | None = None
    api_key: str | None = None
    api_base: str | None = None
    region: str | None = None
    project: str | None = None
    resource_group: str | None = None
    endpoint_name: str | None = None
    transport: str | None = None
    profile: str | None = None
    auth_command: str | None = None
    # proxy control
    with_proxy_if_needed: bool = False
    with_proxy: bool = False
    no_proxy: bool = False
    proxy_port: int = 0
    proxy_log_level: str = "warn"
    # session control
    resume: str | None = None
    session_id: str | None = None
    # execution mode
    prompt: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    harness_args: tuple[str, ...] = ()
    # general
    json: bool = False
    debug: bool = False
    dry_run: bool = False
    observe: bool = False
    home: Path | None = None
    """An isolated home for the harness (HOME, XDG dirs and its config under it)."""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def interactive(self) -> bool:
        return self.prompt is None
