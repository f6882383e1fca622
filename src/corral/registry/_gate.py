"""The launch gate: every launch path calls :func:`launch_gate` before an agent process starts.

``SessionManager.start`` (so session create, start, resume and restart through the API, ``corral
chat`` and ``corral sessions resume``) and ``corral run`` call it. An adapter whose recorded
verification is *stale* (its manifest's structured profile or the user's profile of defaults
changed since the last passing verify, see :mod:`._state`) is verified again first, bounded, and
the launch is refused with :class:`~corral.errors.AdapterUnverified` when that fails. An adapter
never verified, or one without a manifest (demo ids, test resolvers), launches without the gate:
there is no earlier state to be stale against.
"""

from __future__ import annotations

from .._paths import home_dir
from ..errors import AdapterNotFoundError, AdapterUnverified
from ._builtin import builtin_manifest
from ._verify_path import has_record

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from pathlib import Path

    from ..manifests import Manifest
    from ._state import VerifyRecord

GATE_TIMEOUT = 45.0


async def launch_gate(
    adapter_id: str, *, home: Path | None = None, timeout: float = GATE_TIMEOUT
) -> VerifyRecord | None:
    """Re-verify ``adapter_id`` when its verification is stale; the record it launches under
    (``None``: nothing recorded, no gate). Raises :class:`AdapterUnverified` when it fails."""
    import asyncio

    from ._state import ensure_verified

    record, manifest = gate_check(adapter_id, home=home)
    if manifest is None:
        return record
    home = home if home is not None else home_dir()
    try:
        record = await asyncio.wait_for(ensure_verified(manifest, home=home), timeout)
    except TimeoutError:
        raise AdapterUnverified(adapter_id, f"the verification took over {timeout:g} s") from None
    if not record.ok:
        raise AdapterUnverified(adapter_id, record.detail)
    return record


def gate_check(
    adapter_id: str, *, home: Path | None = None
) -> tuple[VerifyRecord | None, Manifest | None]:
    """What the gate finds without verifying anything: the record ``adapter_id`` would launch
    under, and the manifest to verify again first (``None``: the launch may go ahead now)."""
    if not has_record(adapter_id, home):
        return None, None  # what ``last_verify`` answers then, without loading msgspec
    from ._state import is_stale, last_verify

    record = last_verify(adapter_id, home=home)
    if record is None:
        return None, None  # checked first: most launches never build a registry
    home = home if home is not None else home_dir()
    try:
        # A built-in's manifest is the registry's answer without building it (``_builtin``).
        manifest = builtin_manifest(adapter_id)
        if manifest is None:
            from ._registry import Registry

            manifest = Registry(home=home).manifest(adapter_id)
    except AdapterNotFoundError:
        return None, None
    if not is_stale(manifest, home=home):
        return record, None
    return record, manifest
