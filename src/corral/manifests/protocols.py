"""The closed set of structured protocols: one row per wire protocol, in this one place.

Each protocol names how a prompt reaches the agent (``prompt_delivery``), which driver speaks it
(``driver``) and the capabilities the protocol itself offers. Rows marked ``origin="seed-000"`` are
copied from seed 000's tables as written; ``acp`` is corral's own addition (Gemini CLI, Qwen Code,
Copilot, droid and OpenCode all speak the Agent Client Protocol).

Capabilities here are **protocol-level ceilings**: what the wire protocol lets a driver do. What a
particular adapter actually claims is the ``cap_*`` data on its adapter class, and those claims are
proven against the real CLI by the conformance suite, not by this table.

Adding an agent means reusing a row; adding a row means writing a driver for it (see
``docs/manifests.md``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

import msgspec

from ..events import Capabilities


class PromptDelivery(StrEnum):
    """How a prompt is handed to a running structured agent."""

    STDIN = "stdin"
    """One JSON message per line on the agent's stdin."""
    JSON_RPC = "json-rpc"
    """A JSON-RPC request (method call) on the agent's stdin."""
    SSE = "sse"
    """An HTTP request to the agent's local server; replies stream back as server-sent events."""
    ARGV = "argv"
    """The prompt is a command-line argument of a process started for the turn."""


ProtocolName = Literal[
    "claude-stream-json",
    "codex-app-server",
    "opencode-sse",
    "pi-rpc",
    "hermes-gateway",
    "hermes-acp",
    "plain-argv",
    "plain-stdin",
    "acp",
]
"""Every protocol name a manifest may use in ``streaming.preferred.protocol``."""


class ProtocolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the protocol table."""

    name: str
    prompt_delivery: PromptDelivery
    driver: str
    """Driver id; the class that speaks it is registered under entry-point group ``corral.drivers``."""
    capabilities: Capabilities
    origin: Literal["seed-000", "corral"]
    note: str = ""


_CANCEL_INTERACT_RESUME = {"cancel": True, "interact": True, "resume": True}

PROTOCOLS: dict[str, ProtocolSpec] = {
    spec.name: spec
    for spec in (
        ProtocolSpec(
            name="claude-stream-json",
            prompt_delivery=PromptDelivery.STDIN,
            driver="claude",
            capabilities=Capabilities(**_CANCEL_INTERACT_RESUME, image_input=True),
            origin="seed-000",
        ),
        ProtocolSpec(
            name="codex-app-server",
            prompt_delivery=PromptDelivery.JSON_RPC,
            driver="codex",
            capabilities=Capabilities(**_CANCEL_INTERACT_RESUME, image_input=True),
            origin="seed-000",
            note="image_input: turn/start accepts image and localImage inputs (protocols.md §2.1).",
        ),
        ProtocolSpec(
            name="opencode-sse",
            prompt_delivery=PromptDelivery.SSE,
            driver="opencode",
            capabilities=Capabilities(
                **_CANCEL_INTERACT_RESUME, attached_terminal=True, image_input=True
            ),
            origin="seed-000",
            note="image_input: prompt parts accept file parts with an image mime (protocols.md §3.1).",
        ),
        ProtocolSpec(
            name="pi-rpc",
            prompt_delivery=PromptDelivery.JSON_RPC,
            driver="pi",
            capabilities=Capabilities(cancel=True, resume=True, image_input=True),
            origin="seed-000",
            note="image_input: the prompt command takes images (protocols.md §4.1).",
        ),
        ProtocolSpec(
            name="hermes-gateway",
            prompt_delivery=PromptDelivery.JSON_RPC,
            driver="hermes-gateway",
            capabilities=Capabilities(),
            origin="seed-000",
        ),
        ProtocolSpec(
            name="hermes-acp",
            prompt_delivery=PromptDelivery.JSON_RPC,
            driver="hermes-acp",
            capabilities=Capabilities(),
            origin="seed-000",
            note="Seed 000 grants no capability to hermes-acp; kept as written.",
        ),
        ProtocolSpec(
            name="plain-argv",
            prompt_delivery=PromptDelivery.ARGV,
            driver="plain",
            capabilities=Capabilities(),
            origin="seed-000",
        ),
        ProtocolSpec(
            name="plain-stdin",
            prompt_delivery=PromptDelivery.JSON_RPC,
            driver="plain",
            capabilities=Capabilities(),
            origin="seed-000",
            note="Seed 000 lists json-rpc (not stdin) as plain-stdin's prompt delivery; kept as "
            "written. The plain driver writes the prompt as text and closes stdin (docs/protocols/"
            "plain.md).",
        ),
        ProtocolSpec(
            name="acp",
            prompt_delivery=PromptDelivery.JSON_RPC,
            driver="acp",
            capabilities=Capabilities(**_CANCEL_INTERACT_RESUME, image_input=True),
            origin="corral",
            note="corral's addition: Agent Client Protocol (session/cancel, "
            "session/request_permission, session/load, image prompt blocks).",
        ),
    )
}

PROTOCOL_NAMES: tuple[str, ...] = tuple(PROTOCOLS)


def protocol(name: str) -> ProtocolSpec | None:
    """The table row for ``name``, or ``None`` when it is not in the closed set."""
    return PROTOCOLS.get(name)
