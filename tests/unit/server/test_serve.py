"""`corral serve` starts, prints the URL it really listens on, and answers there (the README's
first command)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx

from ._serve import serve_process


def test_corral_serve_prints_its_real_port_and_answers(tmp_path: Path) -> None:
    with serve_process(tmp_path / "home") as served:
        port = int(served.url.rsplit(":", 1)[1])
        assert port != 0
        assert re.fullmatch(rf"{served.url}/auth/login\?code=[\w-]+", served.login_url)
        r = httpx.get(f"{served.url}/api/health", timeout=10)
        assert r.status_code == 200
        assert r.json()["ok"] is True
        page = httpx.get(f"{served.url}/", timeout=10)
        assert "corral" in page.text
        with served.client() as client:
            assert client.get("/api/sessions").json() == []


def test_open_hands_the_browser_a_fresh_login_link(tmp_path: Path) -> None:
    seen = tmp_path / "browser-argv.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" >> {seen}\n')
    browser.chmod(0o755)
    env = {"BROWSER": str(browser), "DISPLAY": "", "WAYLAND_DISPLAY": ""}
    with serve_process(tmp_path / "home", "--open", env=env) as served:
        deadline = time.monotonic() + 10
        while not (seen.exists() and seen.read_text().strip()):
            assert time.monotonic() < deadline, "the browser was never opened"
            time.sleep(0.05)
        opened = seen.read_text().strip()
        assert opened.startswith(f"{served.url}/auth/login?code=")
        assert opened != served.login_url  # its own code: the printed link stays usable
        r = httpx.get(opened, timeout=10)
        assert r.status_code == 303
        assert r.cookies.get("corral_auth") == served.token


def test_open_is_harmless_without_a_browser(tmp_path: Path) -> None:
    env = {"BROWSER": str(tmp_path / "no-such-browser"), "DISPLAY": "", "WAYLAND_DISPLAY": ""}
    with serve_process(tmp_path / "home", "--open", env=env) as served:
        assert httpx.get(f"{served.url}/api/health", timeout=10).status_code == 200
    assert "no browser could be opened" in served.log.read_text()


def test_the_token_file_outlives_a_restart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with serve_process(home) as first:
        token = first.token
    with serve_process(home) as second:
        assert second.token == token  # CLI clients and cookies keep working after a restart
        assert second.login_url != first.login_url  # login codes do not
        with second.client() as client:
            assert client.get("/api/sessions").status_code == 200
