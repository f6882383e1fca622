"""Where an adapter's verification record lives, without loading msgspec (decision 049).

The launch gate's first question on every ``corral run`` is whether there is a record at all
(:func:`corral.registry._gate.gate_check`); with none, the run goes ahead and the record's model
(:class:`~corral.registry._state.VerifyRecord`, a msgspec struct) is never needed.
"""

from __future__ import annotations

import os

from .._paths import home_dir, home_str

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from pathlib import Path


def _parts(adapter_id: str) -> tuple[str, str, str]:
    return "state", "adapters", f"{adapter_id}.verify.json"


def record_path(adapter_id: str, home: Path | None = None) -> Path:
    """``home_dir()/state/adapters/<id>.verify.json``."""
    return (home if home is not None else home_dir()).joinpath(*_parts(adapter_id))


def has_record(adapter_id: str, home: Path | None = None) -> bool:
    """Whether :func:`record_path` exists, without ``pathlib`` (``corral run``'s early spawn
    asks before it is imported, decision 056)."""
    base = os.fspath(home) if home is not None else home_str()
    return os.path.exists(os.path.join(base, *_parts(adapter_id)))
