"""Adapter manifests: schema, validation and the closed protocol table (seed 000).

A manifest is JSON with seed 000's camelCase keys. :func:`validate_manifest` reports every rule a
manifest breaks (field path + rule id, see :data:`RULES`); :func:`parse_manifest` and
:func:`load_manifest` return a typed :class:`Manifest` or raise :class:`~corral.errors.ManifestError`
carrying all the violations.
"""

from ._model import (
    ApprovalPolicy,
    Install,
    Manifest,
    Platform,
    PromptInjection,
    Status,
    Streaming,
    StructuredProfile,
    profile_hash,
)
from ._schema import manifest_schema
from ._validate import (
    RULES,
    Violation,
    load_manifest,
    parse_manifest,
    read_manifest_file,
    validate_manifest,
)
from .protocols import PROTOCOL_NAMES, PROTOCOLS, PromptDelivery, ProtocolSpec, protocol

__all__ = [
    "PROTOCOLS",
    "PROTOCOL_NAMES",
    "RULES",
    "ApprovalPolicy",
    "Install",
    "Manifest",
    "Platform",
    "PromptDelivery",
    "PromptInjection",
    "ProtocolSpec",
    "Status",
    "Streaming",
    "StructuredProfile",
    "Violation",
    "load_manifest",
    "manifest_schema",
    "parse_manifest",
    "profile_hash",
    "protocol",
    "read_manifest_file",
    "validate_manifest",
]
