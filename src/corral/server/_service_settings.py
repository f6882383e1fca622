"""The service's own settings: the attention webhook.

One small JSON file, ``settings.json`` next to the service's database (the corral home by
default), written ``0600`` and replaced atomically. A missing file is the defaults; a corrupt one
is refused with the file named (never silently reset: it may hold a webhook someone relies on).
Every value is validated on the way in (:func:`check_webhook_url`). The defaults per adapter
are the adapters' profiles (:mod:`corral.registry._profiles`); an ``adapter_defaults`` map left in
an older ``settings.json`` is moved there once (:func:`migrate_defaults`).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from .._paths import FILE_MODE
from ..errors import ConfigError
from ..registry import Profile, load_profiles, save_profile

SETTINGS_FILE = "settings.json"
MAX_URL_LENGTH = 2048


class ServiceSettings(msgspec.Struct, frozen=True, kw_only=True):
    webhook_url: str | None = None
    """Receives every attention event as JSON (http or https only); ``None``: off."""
    adapter_defaults: dict[str, Profile] = msgspec.field(default_factory=dict)
    """Only in files written before profiles moved to the registry; see :func:`migrate_defaults`."""


def check_webhook_url(url: str | None) -> str | None:
    """``url`` when it is an absolute http(s) URL with a host, ``None`` for blank; else ValueError."""
    if url is None or not url.strip():
        return None
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"the webhook URL is longer than {MAX_URL_LENGTH} characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"the webhook URL must be http or https, not {parts.scheme or 'none'!r}")
    if not parts.hostname:
        raise ValueError("the webhook URL has no host")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise ValueError("the webhook URL contains whitespace or control characters")
    return url


class SettingsStore:
    """Read and replace ``settings.json``; every change is written before it is returned."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / SETTINGS_FILE
        self._lock = threading.Lock()
        self._current = self._load()

    def _load(self) -> ServiceSettings:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return ServiceSettings()
        try:
            return msgspec.json.decode(raw, type=ServiceSettings)
        except msgspec.MsgspecError as exc:
            raise ConfigError(f"{self.path} is not valid corral settings: {exc}") from None

    @property
    def current(self) -> ServiceSettings:
        return self._current

    def replace(self, new: ServiceSettings) -> ServiceSettings:
        with self._lock:
            tmp = self.path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, FILE_MODE)
            with os.fdopen(fd, "wb") as f:
                f.write(msgspec.json.encode(new))
            os.replace(tmp, self.path)
            self._current = new
        return new

    def update(self, **changes: object) -> ServiceSettings:
        return self.replace(msgspec.structs.replace(self._current, **changes))


def migrate_defaults(store: SettingsStore, *, home: Path | None = None) -> None:
    """Move an older file's ``adapter_defaults`` into the profiles (an existing profile wins)."""
    legacy = store.current.adapter_defaults
    if not legacy:
        return
    existing = load_profiles(home=home)
    for adapter_id, profile in legacy.items():
        if adapter_id not in existing:
            save_profile(adapter_id, profile, home=home)
    store.update(adapter_defaults={})
