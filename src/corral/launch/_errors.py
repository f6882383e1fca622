"""The launcher's error catalog (seed 004 §7): one code, one message template, one exit code.

The first ten codes and their templates are the seed's, word for word (the proxy's install hint
names corral's proxy); the rest are corral's, for conditions the seed's algorithm mentions but its
catalog does not name. Exit codes 60–79 are the launcher's own: any other code ``corral launch``
returns is the harness's (passed through), or 2 for bad usage, 130 after SIGINT.
"""

from __future__ import annotations

from ..errors import CorralError

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Any

CATALOG: dict[str, tuple[int, str]] = {
    "HARNESS_NOT_FOUND": (60, "Unknown harness '{name}'. Available: {list}"),
    "HARNESS_NOT_INSTALLED": (61, "{harness} is not installed. Install with: {installCommand}"),
    "PROVIDER_UNSUPPORTED": (
        62,
        "{harness} cannot use provider '{provider}' (no native support and proxy not enabled)",
    ),
    "PROXY_REQUIRED": (
        63,
        "{harness} requires a proxy for {provider}. Remove --no-proxy or use --with-proxy-if-needed",
    ),
    "PROXY_LAUNCH_FAILED": (
        64,
        "Failed to launch proxy: {error}. Is the corral proxy installed? (pip install corral)",
    ),
    "PROXY_HEALTH_TIMEOUT": (65, "Proxy health check timed out after 15s on port {port}"),
    "AUTH_MISSING": (
        66,
        "Provider '{provider}' requires authentication. Set {envVar} or use --api-key",
    ),
    "TRANSPORT_MISMATCH": (67, "Transport '{transport}' is not available for {harness}+{provider}"),
    "RESUME_NOT_SUPPORTED": (68, "{harness} does not support session resumption"),
    "MODEL_NOT_SPECIFIED": (69, "Provider '{provider}' requires --model to be specified"),
    # corral's additions
    "HARNESS_NOT_LAUNCHABLE": (
        70,
        "Harness '{harness}' is a {type} adapter and cannot be launched via CLI",
    ),
    "PROVIDER_NOT_FOUND": (71, "Unknown provider '{provider}'. Available: {list}"),
    "PROXY_UNAVAILABLE": (
        72,
        "{harness} cannot reach provider '{provider}' through the proxy: {reason}",
    ),
    "TRANSPORT_REQUIRED": (73, "Provider 'custom' requires --transport (one of: {list})"),
    "OPTION_UNSUPPORTED": (74, "{harness} does not support {option}"),
    "PROFILE_INVALID": (75, "Provider profile '{profile}': {error}"),
    "HARNESS_LAUNCH_FAILED": (76, "Failed to start {harness}: {error}"),
}
"""Code → (exit code, message template). Exit codes are distinct."""


class LaunchError(CorralError):
    """A catalog error: ``.code``, ``.fields`` (the template's values) and ``.exit_code``."""

    def __init__(self, code: str, **fields: Any) -> None:
        exit_code, template = CATALOG[code]
        self.code = code
        self.fields = fields
        self.exit_code = exit_code
        super().__init__(template.format(**fields))

    def to_json(self) -> dict[str, Any]:
        return {"error": self.code, "message": str(self), "exitCode": self.exit_code}
