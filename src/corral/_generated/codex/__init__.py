"""Generated Codex app-server types (codex-cli 0.171.0). Do not edit; see models.py."""

CODEX_VERSION = "0.171.0"
