"""Helpers every wire-API module shares: SSE framing, text flattening, error statuses."""

from __future__ import annotations

import json
from typing import Any

from ._asgi import Frame
from ._plan import Plan
from ._scenario import ErrorSpec

_DEFAULT_STATUS = {"rate_limit": 429, "server": 500, "overloaded": 503, "bad_request": 400}


def sse(data: Any, event: str | None = None, delay: float = 0.0) -> Frame:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return Frame(data=f"{head}data: {payload}\n\n".encode(), delay=delay)


def error_status(spec: ErrorSpec, overloaded_status: int = 503) -> int:
    if spec.status is not None:
        return spec.status
    if spec.kind == "overloaded":
        return overloaded_status
    return _DEFAULT_STATUS[spec.kind]


def error_message(spec: ErrorSpec) -> str:
    if spec.message:
        return spec.message
    return {
        "rate_limit": "Rate limit exceeded (fake model).",
        "server": "Internal server error (fake model).",
        "overloaded": "The model is overloaded (fake model).",
        "bad_request": "Bad request (fake model).",
    }[spec.kind]


def text_deltas(plan: Plan) -> list[tuple[str, float]]:
    """Text chunks with the delay to wait before each (none before the first)."""
    return [(chunk, plan.chunk_delay if i else 0.0) for i, chunk in enumerate(plan.text_chunks())]


def halves(text: str) -> list[str]:
    """Tool arguments are streamed in two fragments, as the real APIs split them."""
    if len(text) < 2:
        return [text]
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def flatten(value: Any) -> tuple[str, bool]:
    """Text of a content value (string, list of parts, dict) and whether it holds an image."""
    if value is None:
        return "", False
    if isinstance(value, str):
        return value, False
    if isinstance(value, list):
        texts: list[str] = []
        image = False
        for part in value:
            text, has_image = flatten(part)
            image = image or has_image
            if text:
                texts.append(text)
        return "\n".join(texts), image
    if isinstance(value, dict):
        kind = str(value.get("type", ""))
        if "image" in kind or "inlineData" in value or "image_url" in value:
            mime = str((value.get("inlineData") or {}).get("mimeType", "image/"))
            return "", mime.startswith("image/")
        for key in ("text", "content", "output", "input_text"):
            if key in value:
                return flatten(value[key])
        return json.dumps(value), False
    return str(value), False
