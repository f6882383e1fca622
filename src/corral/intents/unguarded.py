"""Pi and Hermes: agents without a permission layer corral can drive.

Pi runs every tool it has without asking; Hermes (over ACP) offers no permission rules corral can
set at launch. Neither can be held to a read-only or no-push stance by anything the vendor offers,
so the only intent they take is ``full`` — what they do anyway — and the rest are refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._render import Rendering
from ._table import Intent

REASON = "has no permission rules corral can set to forbid edits or commands"


def render(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    if intent is not Intent.FULL:
        raise ValueError(f"{intent} cannot be enforced: the agent {REASON}")
    return Rendering(intent=intent)
