"""Verification records: the last verify result per adapter, keyed by its structured profile's hash.

Changing a profile field (the manifest's structured profile, or the user's profile of defaults
in :mod:`._profiles`) changes the hash, which makes the adapter *stale*: the next launch
re-verifies instead of trusting a verification of a different command. Records live in
``home_dir()/state/adapters/<id>.verify.json``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import msgspec

from ._verify_path import record_path as _record_path

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)

if TYPE_CHECKING:
    from ..manifests import Manifest
    from ._lifecycle import CheckResult

# ``last_verify`` is the launch gate's first step on every ``corral run``: the lifecycle (verify)
# and the profiles load only once there is a record to check (decision 039).


class VerifyRecord(msgspec.Struct, frozen=True, kw_only=True):
    adapter_id: str
    profile_hash: str | None
    ok: bool
    detail: str
    checked_at: datetime
    attempts: int = 1


def record_verify(
    manifest: Manifest, result: CheckResult, *, home: Path | None = None
) -> VerifyRecord:
    """Store ``result`` as the adapter's last verification, with its current profile hash."""
    from ._profiles import profile_key

    record = VerifyRecord(
        adapter_id=manifest.id,
        profile_hash=profile_key(manifest, home=home),
        ok=result.ok,
        detail=result.detail,
        checked_at=datetime.now(UTC),
        attempts=result.attempts,
    )
    path = _record_path(manifest.id, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(record)))
    tmp.replace(path)
    return record


def last_verify(adapter_id: str, *, home: Path | None = None) -> VerifyRecord | None:
    path = _record_path(adapter_id, home)
    try:
        return msgspec.json.decode(path.read_bytes(), type=VerifyRecord)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def is_stale(manifest: Manifest, *, home: Path | None = None) -> bool:
    """True unless the last verification passed for exactly the current structured profile."""
    from ._profiles import profile_key

    record = last_verify(manifest.id, home=home)
    return (
        record is None or not record.ok or record.profile_hash != profile_key(manifest, home=home)
    )


async def ensure_verified(
    manifest: Manifest, *, home: Path | None = None, settle: float = 3.0
) -> VerifyRecord:
    """The launch path's gate: re-verify (and record) when stale, else return the last record."""
    record = last_verify(manifest.id, home=home)
    if record is not None and not is_stale(manifest, home=home):
        return record
    from ._lifecycle import verify

    return record_verify(manifest, await verify(manifest, settle=settle), home=home)
