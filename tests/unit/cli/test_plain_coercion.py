"""Plain str/int/float/bool options are coerced without pydantic, with the usual usage errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer._click.exceptions import BadParameter

from corral.cli._coerce import plain_coercion


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    def go(
        name: str = typer.Option("x", "--name"),
        count: int = typer.Option(1, "--count"),
        ratio: float | None = typer.Option(None, "--ratio"),
        loud: bool = typer.Option(False, "--loud"),
    ) -> None:
        typer.echo(repr((name, count, ratio, loud)))

    return app


def _invoke(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    command = plain_coercion(typer.main.get_command(_app()))
    command.main(args, prog_name="go", standalone_mode=False)
    return capsys.readouterr().out.strip()


def test_values_are_parsed_as_their_types(capsys: pytest.CaptureFixture[str]) -> None:
    out = _invoke(["--name", "n", "--count", "42", "--ratio", "0.5", "--loud"], capsys)
    assert out == repr(("n", 42, 0.5, True))
    assert _invoke([], capsys) == repr(("x", 1, None, False))


def test_bad_number_is_a_usage_error_naming_the_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(BadParameter, match="'many' is not a valid integer") as caught:
        _invoke(["--count", "many"], capsys)
    assert caught.value.exit_code == 2 and caught.value.param is not None
    assert "--count" in caught.value.param.opts
    with pytest.raises(BadParameter, match="'half' is not a valid float"):
        _invoke(["--ratio", "half"], capsys)


def test_a_command_with_int_options_runs_without_pydantic(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.argv = ['corral', 'fake-model', 'serve', '--port', 'abc']\n"
        "from corral.cli import main\n"
        "try:\n    main()\n"
        "except SystemExit as exc:\n    print('rc', exc.code, 'pydantic' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"CORRAL_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout.strip() == "rc 2 False", proc.stderr
    assert "'abc' is not a valid integer" in proc.stderr
