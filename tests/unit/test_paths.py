"""corral's user directories without platformdirs on Linux are platformdirs' (decision 038)."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from corral import _paths

CASES = [
    {"HOME": "/home/u"},
    {"HOME": "/home/u/"},
    {"HOME": "/"},
    {"HOME": "/home/u", "XDG_CONFIG_HOME": "/x/conf", "XDG_CACHE_HOME": "/x/cache"},
    {"HOME": "/home/u", "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": ""},
    {"HOME": "/home/u", "XDG_CONFIG_HOME": "rel/conf", "XDG_CACHE_HOME": "rel/cache"},
    {"HOME": "relative", "XDG_CONFIG_HOME": "/x/conf", "XDG_CACHE_HOME": "/x/cache"},
]


@pytest.mark.skipif(sys.platform != "linux", reason="the fast path is Linux's")
@pytest.mark.parametrize("env", CASES, ids=[str(i) for i in range(len(CASES))])
def test_the_linux_directories_are_platformdirs(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CORRAL_HOME", "CORRAL_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert _paths._linux_xdg("XDG_CONFIG_HOME", "~/.config") is not None
    assert _paths.home_dir() == Path(platformdirs.user_config_dir("corral"))
    assert _paths.cache_dir() == Path(platformdirs.user_cache_dir("corral"))


@pytest.mark.parametrize("home", [None, "", "relative"])
def test_no_usable_home_is_left_to_platformdirs(
    home: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    if home is None:
        monkeypatch.delenv("HOME", raising=False)
    else:
        monkeypatch.setenv("HOME", home)
    assert _paths._linux_xdg("XDG_CONFIG_HOME", "~/.config") is None


def test_other_systems_are_left_to_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    monkeypatch.setattr(_paths.sys, "platform", "darwin")
    assert _paths._linux_xdg("XDG_CONFIG_HOME", "~/.config") is None


def test_android_is_left_to_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    monkeypatch.setenv("ANDROID_DATA", "/data")
    monkeypatch.setenv("ANDROID_ROOT", "/system")
    assert _paths._linux_xdg("XDG_CONFIG_HOME", "~/.config") is None
