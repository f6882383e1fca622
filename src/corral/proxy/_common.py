"""Small helpers the wire converters share: schema cleaning, error classes, id minting."""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any, get_args

from ._ir import ErrorInfo, ErrorKind, Image, Text, Wire

log = logging.getLogger("corral.proxy")

# Keys some targets refuse inside a tool's JSON Schema (checked recursively).
_REFUSED: dict[Wire, frozenset[str]] = {
    "anthropic": frozenset({"$schema"}),
    "openai-chat": frozenset({"$schema"}),
    "openai-responses": frozenset({"$schema"}),
    # parametersJsonSchema takes JSON Schema, but not these meta keys.
    "google": frozenset({"$schema", "$id", "$comment", "examples"}),
}


def clean_schema(schema: Any, target: Wire) -> dict[str, Any]:
    """A tool's argument schema without the keys ``target`` rejects; always an object schema."""
    if not isinstance(schema, dict) or not schema:
        return {"type": "object", "properties": {}}
    cleaned = _clean(schema, _REFUSED[target], depth=0)
    assert isinstance(cleaned, dict)
    cleaned.setdefault("type", "object")
    return cleaned


def _clean(value: Any, refused: frozenset[str], depth: int, names: bool = False) -> Any:
    """``names``: ``value`` maps property names to schemas (a property may be called ``$id``)."""
    if depth > 64:
        return {}
    if isinstance(value, dict):
        return {
            k: _clean(v, refused, depth + 1, names=not names and k in _NAME_MAPS)
            for k, v in value.items()
            if names or k not in refused
        }
    if isinstance(value, list):
        return [_clean(v, refused, depth + 1) for v in value]
    return value


_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})


def drop_unknown(body: dict[str, Any], known: frozenset[str], wire: Wire) -> list[str]:
    """Names of top-level request fields the proxy does not carry over (logged, never a 400)."""
    dropped = sorted(k for k in body if k not in known)
    if dropped:
        log.debug("proxy: %s request fields not carried over: %s", wire, ", ".join(dropped))
    return dropped


KIND_OF_STATUS: dict[int, ErrorKind] = {
    400: "bad_request",
    401: "auth",
    403: "permission",
    404: "not_found",
    408: "timeout",
    413: "too_large",
    422: "bad_request",
    429: "rate_limit",
    500: "server",
    502: "server",
    503: "overloaded",
    504: "timeout",
    529: "overloaded",
}


def error_from_status(
    status: int, message: str, retry_after: float | None = None, kind: str | None = None
) -> ErrorInfo:
    """An error of ``kind`` when it is one, else the kind the HTTP status implies."""
    known: ErrorKind = KIND_OF_STATUS.get(status) or ("server" if status >= 500 else "bad_request")
    for option in get_args(ErrorKind):
        if option == kind:
            known = option
    return ErrorInfo(kind=known, message=message, status=status, retry_after=retry_after)


def error_message(body: Any, fallback: str) -> str:
    """The human message in any of the four APIs' error bodies."""
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])
        if isinstance(err, str):
            return err
    if isinstance(body, str) and body:
        return body[:2000]
    return fallback


def mint(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(12)}"


def content_text(value: Any) -> str:
    """Text of a content value that is a string or a list of text parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(p.get("text", "")) for p in value if isinstance(p, dict) and "text" in p
        )
    if value is None:
        return ""
    return json.dumps(value)


def image_from_data_url(url: str) -> Image:
    """An :class:`Image` from a ``data:`` URL (inline) or any other URL (by reference)."""
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        return Image(media_type=head[5:] or "image/png", data=data)
    return Image(url=url)


def data_url(image: Image) -> str:
    if image.data is not None:
        return f"data:{image.media_type};base64,{image.data}"
    return image.url or ""


def result_parts(value: Any) -> list[Text | Image]:
    """Tool-result content from a string, a list of parts of any API, or a JSON value."""
    if value is None:
        return []
    if isinstance(value, str):
        return [Text(value)]
    if isinstance(value, list):
        out: list[Text | Image] = []
        for part in value:
            if isinstance(part, str):
                out.append(Text(part))
            elif isinstance(part, dict):
                kind = part.get("type")
                if kind in ("text", "input_text", "output_text") and "text" in part:
                    out.append(Text(str(part["text"])))
                elif kind == "image" and isinstance(part.get("source"), dict):
                    src = part["source"]
                    out.append(
                        Image(src.get("media_type", "image/png"), src.get("data"), src.get("url"))
                    )
                elif kind in ("image_url", "input_image"):
                    url = part.get("image_url")
                    url = url.get("url") if isinstance(url, dict) else url
                    out.append(image_from_data_url(str(url or "")))
                else:
                    out.append(Text(json.dumps(part)))
        return out
    return [Text(json.dumps(value))]
