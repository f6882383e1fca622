"""The native support matrix as Markdown, from the tables (``docs/launch.md`` embeds it; a test
keeps the two the same)."""

from __future__ import annotations

from ._tables import HARNESSES, PROVIDERS, TRANSPORTS

_MARK = {"yes": "✅", "hack": "⚠️"}


def matrix_markdown() -> str:
    columns = [p for p in PROVIDERS if p != "custom"]
    lines = [
        "| harness | " + " | ".join(f"`{p}`" for p in columns) + " | `custom` | speaks |",
        "|---" * (len(columns) + 3) + "|",
    ]
    for name, h in HARNESSES.items():
        cells = []
        for p in columns:
            cell = h.native.get(p)
            cells.append(f"{_MARK[cell[0]]} {cell[1]}" if cell else "❌")
        custom = ", ".join(h.native_custom) or "❌"
        speaks = ", ".join(h.transports) or "— (no redirection)"
        lines.append(f"| **{name}** | " + " | ".join(cells) + f" | {custom} | {speaks} |")
    return "\n".join(lines) + "\n"


def providers_markdown() -> str:
    lines = [
        "| provider | category | wire | proxy profile kind | auth (any of) | needs --model |",
        "|---|---|---|---|---|---|",
    ]
    for p in PROVIDERS.values():
        wire = p.wire or (
            "the harness's vendor" if p.id == "api" else "--transport" if p.id == "custom" else "—"
        )
        lines.append(
            f"| `{p.id}` | {p.category} | {wire} | {p.proxy_kind or '— (no proxy)'} | "
            f"{', '.join(p.auth_env) or '—'} | {'yes' if p.needs_model else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def transports_markdown() -> str:
    lines = ["| transport | API | endpoint |", "|---|---|---|"]
    lines += [f"| `{t}` | {d} | `{e}` |" for t, (d, e) in TRANSPORTS.items()]
    return "\n".join(lines) + "\n"
