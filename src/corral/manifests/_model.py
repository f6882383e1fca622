"""The typed manifest (seed 000), camelCase on the wire.

These types describe a manifest that already passed :func:`corral.manifests.validate_manifest`;
the validator, not the decoder, is what reports broken rules (all of them, with paths). The JSON
Schema published by :func:`manifest_schema` is generated from these types and then tightened with
the rules a type cannot say (``supportsFollowUp`` must be ``true``, ``promptDelivery`` must equal
the protocol's own).
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

import msgspec

from .protocols import PROTOCOLS, ProtocolName, ProtocolSpec

ID_PATTERN = r"^[A-Za-z0-9._-]{1,80}$"

Platform = Literal["macos", "windows", "linux"]
"""``macos`` and ``windows`` come from seed 000; ``linux`` is corral's addition (it runs there)."""

ApprovalPolicy = Literal["read-only", "default", "full"]
"""Project access, mapped by each adapter to its CLI's own vocabulary.

``read-only``: may read, never write or run (only offered where the CLI can enforce it) ·
``default``: the CLI asks before acting · ``full``: act without asking.
"""

PromptInjection = Literal["stdin", "paste_then_enter", "manual"]
"""How the shell (PTY) grade hands a prompt to the CLI."""

Status = Literal["installed", "missing", "unknown"]

NonEmpty = Annotated[str, msgspec.Meta(min_length=1, pattern=r"\S")]
AdapterId = Annotated[str, msgspec.Meta(pattern=ID_PATTERN)]
SessionMode = Annotated[str, msgspec.Meta(pattern=r"^persistent-")]


class StructuredProfile(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """``streaming.preferred``: how to launch and talk to the CLI's machine protocol."""

    launch_command: NonEmpty
    prompt_delivery: str
    protocol: ProtocolName
    session_mode: SessionMode
    supports_follow_up: bool

    @property
    def spec(self) -> ProtocolSpec:
        return PROTOCOLS[self.protocol]


class Streaming(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    preferred: StructuredProfile | None = None


class Install(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Where the CLI comes from: exactly one of ``npm`` or ``pip`` (a package spec)."""

    npm: NonEmpty | None = None
    pip: NonEmpty | None = None


class Manifest(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    """An adapter manifest: everything corral needs to find, launch and talk to one agent CLI."""

    id: AdapterId
    display_name: NonEmpty
    executables: Annotated[list[NonEmpty], msgspec.Meta(min_length=1)]
    launch_command: NonEmpty
    supported_platforms: Annotated[list[Platform], msgspec.Meta(min_length=1)]
    supported_approval_policies: Annotated[list[ApprovalPolicy], msgspec.Meta(min_length=1)]
    prompt_injection: PromptInjection
    status: Status = "unknown"
    setup_hint: str = ""
    install: Install | None = None
    icon: str | None = None
    enabled: bool = True
    supports_structured: bool = False
    presentation: dict[str, Any] = msgspec.field(default_factory=dict)
    streaming: Streaming = msgspec.field(default_factory=Streaming)

    @property
    def structured(self) -> StructuredProfile | None:
        return self.streaming.preferred

    def to_json(self) -> dict[str, Any]:
        """The manifest as camelCase JSON builtins (defaults included)."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


def profile_hash(manifest: Manifest) -> str | None:
    """A stable hash of the structured profile; a changed hash marks the adapter stale."""
    profile = manifest.structured
    if profile is None:
        return None
    canonical = json.dumps(msgspec.to_builtins(profile), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
