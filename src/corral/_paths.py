"""Where corral keeps its files. One function per location; ``CORRAL_HOME`` moves them all.

corral's home holds transcripts (whatever an agent read) and the service token, so it is private:
:func:`ensure_private_dir` creates it ``0700`` (and tightens an existing one), :func:`private_file`
creates files ``0600``. See docs/security.md.
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # ``pathlib`` loads at the first Path made: not before ``corral run``'s spawn
if TYPE_CHECKING:
    from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
TOKEN_FILE = "token"


def home_dir() -> Path:
    """corral's config and state directory: ``$CORRAL_HOME`` or the user config dir."""
    from pathlib import Path

    return Path(home_str())


def home_str() -> str:
    """:func:`home_dir` as the string it is made from, for code that runs before ``pathlib``
    is imported (``corral run``'s early spawn, decision 056)."""
    env = os.environ.get("CORRAL_HOME")
    if env:
        return env
    found = _linux_xdg("XDG_CONFIG_HOME", "~/.config")
    if found is not None:
        return found
    import platformdirs  # only when no variable says where (it costs a launch's start-up)

    return str(platformdirs.user_config_dir("corral"))


def cache_dir() -> Path:
    """Large re-creatable files (installed agent CLIs): ``$CORRAL_CACHE_DIR`` or the user cache dir."""
    from pathlib import Path

    return Path(cache_str())


def cache_str() -> str:
    """:func:`cache_dir` as the string it is made from (see :func:`home_str`)."""
    env = os.environ.get("CORRAL_CACHE_DIR")
    if env:
        return env
    found = _linux_xdg("XDG_CACHE_HOME", "~/.cache")
    if found is not None:
        return found
    import platformdirs

    return str(platformdirs.user_cache_dir("corral"))


def _linux_xdg(variable: str, default: str) -> str | None:
    """platformdirs' user directory for corral in the plain Linux case (an absolute ``$variable``,
    else ``default`` under an absolute ``$HOME``), without importing it: with ``tempfile``,
    ``shutil`` and ``random`` it is ~5 ms of every ``corral launch`` (decision 038). ``None``
    elsewhere (another OS, Android, no usable ``HOME``): platformdirs decides.
    ``tests/unit/test_paths.py`` compares the two."""
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel"):
        return None
    environ = os.environ
    if environ.get("ANDROID_DATA") == "/data" and environ.get("ANDROID_ROOT") == "/system":
        return None
    base = environ.get(variable, "")
    if not os.path.isabs(base):
        if not os.path.isabs(environ.get("HOME", "")):
            return None
        base = os.path.expanduser(default)
    return os.path.join(base, "corral")


def token_path() -> Path:
    """The service's bearer token (``corral serve`` writes it, CLI clients read it)."""
    return home_dir() / TOKEN_FILE


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) ``0700``; an existing one we own loses group/other bits."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    st = path.stat()
    if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
        path.chmod(stat.S_IMODE(st.st_mode) & ~0o077)
    return path


def private_file(path: Path) -> Path:
    """Make sure ``path`` exists with mode ``0600`` (created so, never world-readable in between)."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def tighten_file(path: Path) -> Path:
    """Take the group and other bits off the existing ``path`` without opening it
    (``FileNotFoundError`` if it is absent; a ``0644`` file becomes ``0600``, a ``0400`` one stays
    so). For files another part of this process may hold open with POSIX locks, such as a
    database: :func:`private_file`'s descriptor would drop those locks when it closed."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        os.chmod(path, mode & ~0o077)
    return path


def read_token() -> str | None:
    """The bearer token for the local service: ``$CORRAL_TOKEN``, else the token file, else ``None``."""
    env = os.environ.get("CORRAL_TOKEN")
    if env:
        return env
    try:
        value = token_path().read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return value or None


def ensure_token() -> str:
    """The service token: ``$CORRAL_TOKEN``, else the token file, created ``0600`` when absent
    (an existing file is tightened to ``0600``)."""
    env = os.environ.get("CORRAL_TOKEN")
    if env:
        return env
    path = token_path()
    ensure_private_dir(path.parent)
    private_file(path)
    current = path.read_text(encoding="utf-8").strip()
    if current:
        return current
    import secrets

    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    return token


def directory_problem(path: str) -> str | None:
    """Why ``path`` cannot be a session's working directory, or ``None`` when it can: it must be
    an absolute path to an existing directory, and not the filesystem root."""
    if not path or not os.path.isabs(path):
        return f"cwd {path!r} must be an absolute path"
    if not os.path.exists(path):
        return f"cwd {path!r} does not exist"
    if not os.path.isdir(path):
        return f"cwd {path!r} is not a directory"
    if os.path.realpath(path) == os.path.realpath(os.sep):
        return "cwd may not be the filesystem root"
    return None
