"""Unified diffs of an agent's file edits, as :func:`difflib.unified_diff` writes them.

A new file (or a deleted one) is every line added (or removed): that diff is written directly,
with the same headers and hunk ranges ``difflib`` gives, because ``difflib`` takes tens of
microseconds to find that nothing matches. Any other pair of texts goes to ``difflib``.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def unified(old: Sequence[str], new: Sequence[str], fromfile: str, tofile: str) -> str:
    """``"".join(difflib.unified_diff(old, new, fromfile, tofile))`` (lines keep their ends)."""
    if old and new:
        return "".join(difflib.unified_diff(old, new, fromfile, tofile))
    if not old and not new:
        return ""
    count = len(old or new)
    span = "1" if count == 1 else f"1,{count}"
    ranges = f"-{span} +0,0" if old else f"-0,0 +{span}"
    sign = "-" if old else "+"
    body = "".join(sign + line for line in (old or new))
    return f"--- {fromfile}\n+++ {tofile}\n@@ {ranges} @@\n{body}"
