"""Where corral keeps its files. One function per location; ``CORRAL_HOME`` moves them all."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def home_dir() -> Path:
    """corral's config and state directory: ``$CORRAL_HOME`` or the user config dir."""
    env = os.environ.get("CORRAL_HOME")
    return Path(env) if env else Path(platformdirs.user_config_dir("corral"))


def cache_dir() -> Path:
    """Large re-creatable files (installed agent CLIs): ``$CORRAL_CACHE_DIR`` or the user cache dir."""
    env = os.environ.get("CORRAL_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("corral"))
