"""The published JSON Schema of a manifest (``corral schema manifest``)."""

from __future__ import annotations

from typing import Any

import msgspec

from ._model import Manifest
from .protocols import PROTOCOLS


def manifest_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of an adapter manifest, with the cross-field rules spelt out."""
    schema: dict[str, Any] = msgspec.json.schema(Manifest)
    defs = schema["$defs"]
    manifest = defs["Manifest"]
    manifest["properties"]["$schema"] = {"type": "string"}
    for key in ("executables", "supportedPlatforms", "supportedApprovalPolicies"):
        manifest["properties"][key]["uniqueItems"] = True
    # structured-flag: a profile makes the adapter structured, and only a profile does.
    manifest["allOf"] = [
        {
            "if": {
                "properties": {
                    "streaming": {
                        "required": ["preferred"],
                        "properties": {"preferred": {"type": "object"}},
                    }
                },
                "required": ["streaming"],
            },
            "then": {
                "properties": {"supportsStructured": {"const": True}},
                "required": ["supportsStructured"],
            },
            "else": {"properties": {"supportsStructured": {"const": False}}},
        }
    ]
    for name in ("Streaming", "StructuredProfile", "Install"):
        defs[name]["additionalProperties"] = False
    defs["Install"]["minProperties"] = 1
    defs["Install"]["maxProperties"] = 1
    profile = defs["StructuredProfile"]
    profile["properties"]["supportsFollowUp"] = {"const": True}
    # prompt-delivery-matches: one if/then per row of the closed protocol table.
    profile["allOf"] = [
        {
            "if": {"properties": {"protocol": {"const": spec.name}}},
            "then": {"properties": {"promptDelivery": {"const": spec.prompt_delivery.value}}},
        }
        for spec in PROTOCOLS.values()
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "corral adapter manifest",
        **schema,
    }
