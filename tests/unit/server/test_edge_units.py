"""The pure pieces behind the service's edge, table-driven (the real-process proofs are in
test_security.py): redaction, Host parsing, path confinement, login codes, private files."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from corral import _db
from corral._paths import ensure_private_dir, ensure_token, token_path
from corral._process import ProcessTransport
from corral._redact import MARK, redact, redact_event
from corral.errors import ConfigError
from corral.events import EndReason, ErrorEvent, SessionEnded, TextDelta, WarningEvent
from corral.server import Settings, create_app
from corral.server._confine import confine_path
from corral.server._guard import host_allowed, host_name
from corral.server._login import LoginCodes
from corral.server._responses import Refusal
from corral.sessions import AdapterResolver, SessionManager, SessionSpec
from corral.testing.scripted_adapter import ScriptedAdapter


@pytest.mark.parametrize(
    "text",
    [
        "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 rejected",
        "OPENAI sk-proj-abcdefghijklmnopqrstuvwx1234 bad",
        "sk-abcdefghijklmnopqrstuvwxyz012345",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "google AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
        "slack xoxb-123456789012-abcdefghijkl",
        "aws AKIAABCDEFGHIJKLMNOP",
        "Authorization: Bearer abc.def-ghi_jkl",
    ],
)
def test_known_key_shapes_are_redacted(text: str) -> None:
    out = redact(text, env={})
    assert MARK in out
    secret = text.split()[-2] if text.endswith(("rejected", "bad")) else text.split()[-1]
    assert secret not in out


def test_env_secret_values_are_redacted_and_short_or_other_values_kept() -> None:
    env = {
        "MY_API_KEY": "plain-value-1234",
        "GH_TOKEN": "tokenvalue99",
        "APP_SECRET": "s3cr3t-s3cr3t",
        "DB_PASSWORD": "hunter2hunter2",
        "DEBUG_KEY": "1",  # too short to be a secret
        "HOME": "/home/someone",  # not a secret name
    }
    text = "plain-value-1234 tokenvalue99 s3cr3t-s3cr3t hunter2hunter2 1 /home/someone"
    assert redact(text, env=env) == f"{MARK} {MARK} {MARK} {MARK} 1 /home/someone"
    assert redact("nothing here", env=env) == "nothing here"
    ordinary = "task-abcdefghijklmnopqrstuvwxyz risk-assessment-document-v2 mask_ghp_x"
    assert redact(ordinary, env={}) == ordinary  # words that merely contain a key prefix
    assert redact("", env=env) == ""


def test_redact_event_touches_diagnostics_only() -> None:
    ended = SessionEnded(
        reason=EndReason.FAILED, message="m", stderr_tail="sk-ant-api03-xxxxxxxxxx"
    )
    assert redact_event(ended).stderr_tail == MARK
    delta = TextDelta(text="sk-ant-api03-xxxxxxxxxx")  # the agent's own text is the transcript
    assert redact_event(delta) is delta
    for kind in (ErrorEvent, WarningEvent):
        assert redact_event(kind(message="bad key sk-ant-api03-xxxxxxxxxx")).message == (
            f"bad key {MARK}"
        )
        clean = kind(message="nothing secret")
        assert redact_event(clean) is clean
    quiet = SessionEnded(reason=EndReason.COMPLETED, message="done")
    assert redact_event(quiet) is quiet


@pytest.mark.parametrize(
    ("header", "name", "allowed"),
    [
        ("127.0.0.1:8765", "127.0.0.1", True),
        ("localhost", "localhost", True),
        ("LOCALHOST:1", "localhost", True),
        ("[::1]:8765", "::1", True),
        ("127.0.0.2", "127.0.0.2", True),
        ("corral.lan:80", "corral.lan", True),
        ("evil.example", "evil.example", False),
        ("localhost.evil.example", "localhost.evil.example", False),
        ("0.0.0.0:8765", "0.0.0.0", False),
        ("", "", False),
    ],
)
def test_host_allow_list(header: str, name: str, allowed: bool) -> None:
    assert host_name(header) == name
    assert host_allowed(header, ["corral.lan"]) is allowed


def test_wildcard_allowed_hosts_are_refused(tmp_path: Path) -> None:
    for bad in ("*", "*.example", "http://x/"):
        with pytest.raises(ConfigError, match="not a host name"):
            create_app(Settings(db_path=tmp_path / "c.db", allowed_hosts=(bad,)))


def test_confine_path(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a")
    (tmp_path / "out.txt").write_text("o")
    (root / "link").symlink_to(tmp_path / "out.txt")
    (root / "inner-link").symlink_to(root / "sub" / "a.txt")
    real = str((root / "sub" / "a.txt").resolve())
    assert confine_path("sub/a.txt", str(root)) == real
    assert confine_path(str(root / "sub" / "a.txt"), str(root)) == real
    assert confine_path("inner-link", str(root)) == real  # a symlink that stays inside is fine
    for bad in ("../out.txt", "link", "sub/../../out.txt", "/etc/passwd", "sub", "nope"):
        with pytest.raises(Refusal) as info:
            confine_path(bad, str(root))
        assert info.value.status == 422


def test_login_codes_are_single_use_and_expire() -> None:
    now = [0.0]
    codes = LoginCodes(10.0, clock=lambda: now[0])
    first, forever = codes.issue(), codes.issue(ttl=None)
    assert codes.redeem(first) is True
    assert codes.redeem(first) is False
    late = codes.issue()
    now[0] = 11.0
    assert codes.redeem(late) is False  # expired
    assert codes.redeem(forever) is True
    assert codes.redeem("") is False


def test_database_and_home_are_created_private(tmp_path: Path) -> None:
    db = tmp_path / "new-home" / "corral.db"
    conn = _db.connect(db)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    for f in db.parent.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    conn.close()

    loose = tmp_path / "old.db"
    loose.touch(mode=0o644)
    os.chmod(loose, 0o644)
    _db.connect(loose).close()
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600  # an existing loose database is tightened


def test_token_file_is_private_and_stable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORRAL_TOKEN", raising=False)
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    token = ensure_token()
    assert len(token) >= 32
    assert stat.S_IMODE(token_path().stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700
    os.chmod(token_path(), 0o644)
    assert ensure_token() == token  # the same token next time, and the file tightened again
    assert stat.S_IMODE(token_path().stat().st_mode) == 0o600
    monkeypatch.setenv("CORRAL_TOKEN", "from-env")
    assert ensure_token() == "from-env"
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    assert stat.S_IMODE(ensure_private_dir(loose).stat().st_mode) == 0o700


async def test_session_manager_refuses_a_bad_cwd(tmp_path: Path) -> None:
    resolver = AdapterResolver(
        {"scripted": ScriptedAdapter.configured()}, use_env=False, use_entry_points=False
    )
    (tmp_path / "f").write_text("")
    async with SessionManager(tmp_path / "c.db", resolver=resolver) as mgr:
        for cwd in ("rel", str(tmp_path / "missing"), str(tmp_path / "f"), "/"):
            with pytest.raises(ConfigError):
                await mgr.create_session(SessionSpec(adapter_id="scripted", cwd=cwd), start=False)
        assert mgr.list_sessions() == []
        ok = await mgr.create_session(
            SessionSpec(adapter_id="scripted", cwd=str(tmp_path)), start=False
        )
        assert ok.cwd == str(tmp_path)


async def test_transport_stderr_tail_hides_what_corral_passed(tmp_path: Path) -> None:
    # the seam every adapter's stderr tail comes from, with or without a session manager
    script = "import os,sys; sys.stderr.write(os.environ['X_API_KEY'] + ' ghp_' + 'a'*36)"
    env = {**os.environ, "X_API_KEY": "passed-to-the-agent"}
    transport = ProcessTransport([sys.executable, "-c", script], env=env)
    await transport.start()
    assert await transport.wait(30) == 0
    assert transport.stderr_tail == f"{MARK} {MARK}"


def test_cli_error_messages_are_redacted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import typer

    from corral.cli._common import run_guarded

    app = typer.Typer()

    @app.command()
    def boom() -> None:
        raise ConfigError("bad key sk-ant-api03-0123456789abcdef [x]")

    monkeypatch.setattr(sys, "argv", ["corral"])
    assert run_guarded(app) == 2
    err = capsys.readouterr().err
    assert "bad key [REDACTED] [x]" in err
    assert "0123456789abcdef" not in err
