"""An ACP adapter made from a manifest alone: the row-reuse promise of the protocol table.

A custom manifest (``corral adapters add``, ``corral adapters import-acp``) whose structured
profile speaks ``acp`` needs no code: :func:`acp_class_for` turns its ``streaming.preferred``
launch command into an :class:`~corral.adapters._acp.AcpAdapter` subclass (first word: the
executable, looked up like any other; the rest: the ACP mode's arguments).

It claims no optional capability: what the shared driver could do with an arbitrary ACP agent is
not something a run of *that* agent has shown. ``corral conformance <id>`` runs the scenarios every
adapter must pass (text, tools, follow-up, usage, errors) through the same driver.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._acp import AcpAdapter

if TYPE_CHECKING:
    from ..manifests import Manifest


class ManifestAcpAdapter(AcpAdapter, abstract=True):
    """Base of the classes :func:`acp_class_for` makes; ``manifest_id`` names the manifest."""

    manifest_id: str = ""
    provides_models = True
    provides_usage = True


def _class_name(adapter_id: str) -> str:
    return "Acp_" + re.sub(r"[^0-9A-Za-z_]", "_", adapter_id)


def acp_class_for(manifest: Manifest) -> type[ManifestAcpAdapter]:
    """A class that drives ``manifest``'s ``acp`` launch command through the shared ACP driver."""
    profile = manifest.structured
    if profile is None or profile.protocol != "acp":
        raise ConfigError(f"{manifest.id}: its structured profile does not speak acp")
    try:
        words = shlex.split(profile.launch_command)
    except ValueError as exc:
        raise ConfigError(f"{manifest.id}: bad launch command: {exc}") from exc
    if not words:
        raise ConfigError(f"{manifest.id}: empty launch command")
    binary, *args = words
    attrs = {
        "__module__": __name__,
        "__doc__": f"{manifest.display_name} over ACP, from its manifest ({manifest.id}).",
        "agent_id": manifest.id,
        "display_name": manifest.display_name,
        "cli_binary": binary,
        "acp_args": tuple(args),
        "manifest_id": manifest.id,
    }
    return type(_class_name(manifest.id), (ManifestAcpAdapter,), attrs)
