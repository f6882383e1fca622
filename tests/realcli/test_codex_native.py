"""The pinned codex through its native executable (decision 038): corral skips the npm wrapper
(``bin/codex.js``, a Node start) only where it knows what that wrapper would do.

* the pinned wrapper is one ``corral.agents._native.REVIEWED`` lists (a codex release that
  changes it fails here: read the new wrapper, then update the table and the module docstring);
* Node running that very wrapper (copied into a scratch tree at test time, with a stand-in native
  executable that reports what it got) hands the native executable exactly the argv and the
  environment corral predicts;
* the real native executable answers like the wrapper.
The conformance suites (``test_conformance_codex.py``) run both codex drivers this way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.agents._native import REVIEWED, native_entry

pytestmark = [pytest.mark.realcli("codex"), pytest.mark.timeout(120)]

REPORTER = """#!{python}
import json, os, sys
json.dump({{"argv": sys.argv, "env": dict(os.environ)}}, sys.stdout)
"""


def _native(binary: Path, env: dict[str, str]):  # type: ignore[no-untyped-def]
    entry = native_entry(binary, env)
    assert entry is not None, (
        f"{binary}: the wrapper is not one corral reviewed ({sorted(REVIEWED.values())}); "
        "read its bin/codex.js and update corral/agents/_native.py (decision 038)"
    )
    return entry


def test_the_pinned_wrapper_is_a_reviewed_one(agent_bin: Callable[[str], Path]) -> None:
    binary = agent_bin("codex")
    entry = _native(binary, {})
    assert Path(entry.command).is_file() and os.access(entry.command, os.X_OK)
    assert entry.env["CODEX_MANAGED_PACKAGE_ROOT"] == os.path.realpath(
        binary.resolve().parent.parent
    )


@pytest.mark.parametrize(
    "caller_env",
    [
        {},
        {"CODEX_MANAGED_BY_BUN": "1", "CODEX_MANAGED_PACKAGE_ROOT": "/elsewhere"},
        {"npm_config_user_agent": "bun/1.1.0 npm/? node/v22 linux x64"},
    ],
    ids=["plain", "stale-variables", "bun-agent"],
)
def test_node_running_the_wrapper_hands_over_what_corral_predicts(
    tmp_path: Path, agent_bin: Callable[[str], Path], caller_env: dict[str, str]
) -> None:
    real = agent_bin("codex")
    real_native = Path(_native(real, {}).command)
    real_modules = real.parent.parent  # <prefix>/node_modules
    package = real.resolve().parent.parent  # @openai/codex
    modules = tmp_path / "node_modules"
    (modules / "@openai" / "codex" / "bin").mkdir(parents=True)
    shutil.copy2(package / "bin" / "codex.js", modules / "@openai" / "codex" / "bin" / "codex.js")
    shutil.copy2(package / "package.json", modules / "@openai" / "codex" / "package.json")
    relative = real_native.relative_to(real_modules)  # @openai/codex-<platform>/vendor/…/codex
    platform_package = modules / relative.parts[0] / relative.parts[1]
    platform_package.mkdir(parents=True)
    (platform_package / "package.json").write_text("{}")
    stand_in = modules / relative
    stand_in.parent.mkdir(parents=True)
    stand_in.write_text(REPORTER.format(python=sys.executable))
    stand_in.chmod(0o755)
    (modules / ".bin").mkdir()
    (modules / ".bin" / "codex").symlink_to("../@openai/codex/bin/codex.js")
    binary = modules / ".bin" / "codex"

    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", **caller_env}
    done = subprocess.run(
        [str(binary), "exec", "--json", "--", "a prompt"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    entry = _native(binary, env)
    assert got["argv"] == [entry.command, "exec", "--json", "--", "a prompt"]
    assert got["env"] == entry.environment(env)


def test_the_native_executable_answers_like_the_wrapper(
    tmp_path: Path, agent_bin: Callable[[str], Path]
) -> None:
    binary = agent_bin("codex")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "CODEX_HOME": str(tmp_path / ".codex"),
    }
    (tmp_path / ".codex").mkdir()
    entry = _native(binary, env)
    wrapped = subprocess.run(
        [str(binary), "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    direct = subprocess.run(
        [entry.command, "--version"],
        env=entry.environment(env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrapped.returncode == direct.returncode == 0, (wrapped.stderr, direct.stderr)
    assert direct.stdout == wrapped.stdout
    assert direct.stdout.startswith("codex-cli ")
