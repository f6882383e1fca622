"""Questions the scenarios ask of the scripted server's request log (the provider's ground truth)."""

from __future__ import annotations

from typing import Any


def _main(server: Any) -> list[Any]:
    return list(server.requests.main())


def count_main(server: Any) -> int:
    return len(_main(server))


def saw_tool_result(server: Any, containing: str | None = None) -> bool:
    """Some main request carried a tool result (containing ``containing``, when given)."""
    return len(server.requests.with_tool_result(containing)) > 0


def _carries(record: Any, needle: str) -> bool:
    return any(needle in m.text for m in record.messages if m.role in ("user", "assistant", "tool"))


def last_main_carries(server: Any, needle: str) -> bool:
    """The latest main request's conversation contains ``needle`` (history was carried)."""
    main = _main(server)
    return bool(main) and _carries(main[-1], needle)


def any_main_carries(server: Any, needle: str) -> bool:
    return any(_carries(r, needle) for r in _main(server))


def any_image(server: Any) -> bool:
    return bool(server.requests.any_image())
