"""The closed protocol table against seed 000's two tables (plus corral's ``acp`` row)."""

from __future__ import annotations

from typing import get_args

import jsonschema

from corral.events import Capabilities
from corral.manifests import PROTOCOLS, PromptDelivery, manifest_schema, protocol
from corral.manifests.protocols import ProtocolName

# Seed 000, "Protocols": protocol → (prompt delivery, driver), as written there.
SEED_000 = {
    "claude-stream-json": ("stdin", "claude"),
    "codex-app-server": ("json-rpc", "codex"),
    "opencode-sse": ("sse", "opencode"),
    "pi-rpc": ("json-rpc", "pi"),
    "hermes-gateway": ("json-rpc", "hermes-gateway"),
    "hermes-acp": ("json-rpc", "hermes-acp"),
    "plain-argv": ("argv", "plain"),
    "plain-stdin": ("json-rpc", "plain"),
}

# Seed 000, "Capabilities": the protocols each capability lists.
SEED_000_CAPS = {
    "cancel": {"claude-stream-json", "codex-app-server", "opencode-sse", "pi-rpc"},
    "interact": {"claude-stream-json", "codex-app-server", "opencode-sse"},
    "resume": {"claude-stream-json", "codex-app-server", "opencode-sse", "pi-rpc"},
    "attached_terminal": {"opencode-sse"},
}


def test_seed_rows_are_copied_faithfully() -> None:
    for name, (delivery, driver) in SEED_000.items():
        spec = protocol(name)
        assert spec is not None, name
        assert (spec.prompt_delivery.value, spec.driver, spec.origin) == (
            delivery,
            driver,
            "seed-000",
        )


def test_acp_is_corrals_addition() -> None:
    spec = PROTOCOLS["acp"]
    assert (spec.prompt_delivery, spec.driver, spec.origin) == (
        PromptDelivery.JSON_RPC,
        "acp",
        "corral",
    )
    assert set(PROTOCOLS) == {*SEED_000, "acp"}


def test_seed_capabilities() -> None:
    seed_rows = {n: s for n, s in PROTOCOLS.items() if s.origin == "seed-000"}
    for cap, names in SEED_000_CAPS.items():
        assert {n for n, s in seed_rows.items() if getattr(s.capabilities, cap)} == names, cap
    # image_input: claude-stream-json for sure, "and others per capabilities()".
    assert PROTOCOLS["claude-stream-json"].capabilities.image_input
    for name in ("hermes-gateway", "hermes-acp", "plain-argv", "plain-stdin"):
        assert PROTOCOLS[name].capabilities == Capabilities(), name


def test_literal_alias_matches_the_table() -> None:
    assert set(get_args(ProtocolName)) == set(PROTOCOLS)
    assert protocol("carrier-pigeon") is None


def test_schema_encodes_each_protocols_prompt_delivery() -> None:
    schema = manifest_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    for name, spec in PROTOCOLS.items():
        for delivery in PromptDelivery:
            doc = {
                "id": "x",
                "displayName": "X",
                "executables": ["x"],
                "launchCommand": "x",
                "supportedPlatforms": ["linux"],
                "supportedApprovalPolicies": ["full"],
                "promptInjection": "manual",
                "supportsStructured": True,
                "streaming": {
                    "preferred": {
                        "launchCommand": "x",
                        "protocol": name,
                        "promptDelivery": delivery.value,
                        "sessionMode": "persistent-session",
                        "supportsFollowUp": True,
                    }
                },
            }
            assert v.is_valid(doc) == (delivery == spec.prompt_delivery), (name, delivery)
