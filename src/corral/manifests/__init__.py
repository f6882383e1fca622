"""Adapter manifests: schema, validation and the closed protocol table (seed 000)."""

from typing import Any


def manifest_schema() -> dict[str, Any]:
    raise NotImplementedError("manifests are being built in issue 2")
