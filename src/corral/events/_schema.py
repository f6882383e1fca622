"""JSON Schema export of the event model (``corral schema events``)."""

from __future__ import annotations

from typing import Any

import msgspec

from ._envelope import Envelope


def events_schema() -> dict[str, Any]:
    """A JSON Schema (2020-12) for one envelope and every event it can carry."""
    schema: dict[str, Any] = msgspec.json.schema(Envelope)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "corral event envelope"
    return schema
