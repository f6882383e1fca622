"""Adapter profiles: the user's defaults per adapter (model, effort, intent), kept in corral's home.

A profile is what a launch uses when it names no model, effort or intent of its own. It lives in
``home_dir()/state/profiles.json`` (mode ``0600``, replaced atomically), one entry per adapter id,
and it is part of what a verification vouches for: :func:`profile_key` folds it into the
manifest's structured-profile hash, so changing a profile makes the adapter *stale* and the next
launch re-verifies (:func:`corral.registry.launch_gate`). A corrupt file is refused with its path
named, never silently reset.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from pathlib import Path

import msgspec

from .._paths import FILE_MODE, home_dir
from ..errors import ConfigError
from ..intents import Intent
from ..manifests import Manifest, profile_hash

PROFILES_FILE = "profiles.json"
_EFFORT = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_lock = threading.Lock()


class Profile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One adapter's defaults; ``None``: the adapter's own default."""

    model: str | None = None
    effort: str | None = None
    """A reasoning effort the adapter lists for its models (``GET /api/adapters/{id}/models``)."""
    intent: Intent | None = None

    def is_empty(self) -> bool:
        return self == Profile()


def check_profile(profile: Profile) -> Profile:
    """``profile`` when its values are well formed, else ValueError naming the field."""
    if profile.model is not None and (len(profile.model) > 200 or not profile.model.strip()):
        raise ValueError("model must be a non-empty name of at most 200 characters")
    if profile.effort is not None and not _EFFORT.fullmatch(profile.effort):
        raise ValueError(f"effort must be a short lower-case name, not {profile.effort!r}")
    return profile


def _path(home: Path | None) -> Path:
    return (home if home is not None else home_dir()) / "state" / PROFILES_FILE


def load_profiles(*, home: Path | None = None) -> dict[str, Profile]:
    path = _path(home)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    try:
        return msgspec.json.decode(raw, type=dict[str, Profile])
    except msgspec.MsgspecError as exc:
        raise ConfigError(f"{path} is not a valid corral profiles file: {exc}") from None


def load_profile(adapter_id: str, *, home: Path | None = None) -> Profile:
    return load_profiles(home=home).get(adapter_id, Profile())


def save_profile(adapter_id: str, profile: Profile, *, home: Path | None = None) -> Profile:
    """Store ``profile`` for ``adapter_id`` (an empty one forgets it); returns it."""
    check_profile(profile)
    path = _path(home)
    with _lock:
        profiles = load_profiles(home=home)
        if profile.is_empty():
            profiles.pop(adapter_id, None)
        else:
            profiles[adapter_id] = profile
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(msgspec.json.encode(dict(sorted(profiles.items()))))
        os.replace(tmp, path)
    return profile


def profile_key(manifest: Manifest, *, home: Path | None = None) -> str | None:
    """The hash a verification is recorded under: the manifest's structured profile, and the
    user's profile for that adapter when there is one (so changing either makes it stale)."""
    base = profile_hash(manifest)
    profile = load_profile(manifest.id, home=home)
    if profile.is_empty():
        return base
    canonical = f"{base}\n".encode() + msgspec.json.encode(profile)
    return hashlib.sha256(canonical).hexdigest()
