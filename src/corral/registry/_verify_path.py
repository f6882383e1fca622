"""Where an adapter's verification record lives, without loading msgspec (decision 049).

The launch gate's first question on every ``corral run`` is whether there is a record at all
(:func:`corral.registry._gate.gate_check`); with none, the run goes ahead and the record's model
(:class:`~corral.registry._state.VerifyRecord`, a msgspec struct) is never needed.
"""

from __future__ import annotations

from .._paths import home_dir

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from pathlib import Path


def record_path(adapter_id: str, home: Path | None = None) -> Path:
    """``home_dir()/state/adapters/<id>.verify.json``."""
    return (
        (home if home is not None else home_dir())
        / "state"
        / "adapters"
        / f"{adapter_id}.verify.json"
    )
