"""The service's own settings: the attention webhook and the defaults per adapter.

One small JSON file, ``settings.json`` next to the service's database (the corral home by
default), written ``0600`` and replaced atomically. A missing file is the defaults; a corrupt one
is refused with the file named (never silently reset: it may hold a webhook someone relies on).
Every value is validated on the way in (:func:`check_webhook_url`, :class:`AdapterDefaults`).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from .._paths import FILE_MODE
from ..errors import ConfigError
from ..intents import Intent

SETTINGS_FILE = "settings.json"
MAX_URL_LENGTH = 2048
EFFORTS = ("low", "medium", "high")


class AdapterDefaults(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the new-session form preselects for one adapter (blank: the adapter's own default)."""

    model: str | None = None
    effort: str | None = None
    intent: Intent | None = None


class ServiceSettings(msgspec.Struct, frozen=True, kw_only=True):
    webhook_url: str | None = None
    """Receives every attention event as JSON (http or https only); ``None``: off."""
    adapter_defaults: dict[str, AdapterDefaults] = msgspec.field(default_factory=dict)


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


def check_defaults(defaults: AdapterDefaults) -> AdapterDefaults:
    if defaults.effort is not None and defaults.effort not in EFFORTS:
        raise ValueError(f"effort must be one of {', '.join(EFFORTS)}, not {defaults.effort!r}")
    if defaults.model is not None and (len(defaults.model) > 200 or not defaults.model.strip()):
        raise ValueError("model must be a non-empty name of at most 200 characters")
    return defaults


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
