"""Run one fault case in a fresh interpreter and print its outcome as JSON (``python -m``).

A RecursionError deep inside a decoder can leave CPython's recursion bookkeeping off, after which
compiling any AST (pytest's reports) fails with ``SystemError``; such cases run here, not in the
pytest process."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.unit.faults._harness import make, run_turn


async def main(family: str, mode: str, tmp: Path) -> dict[str, object]:
    adapter, _ = make(family, mode, tmp)
    try:
        out = await run_turn(adapter)
    except BaseException as exc:
        return {"escaped": f"{type(exc).__name__}: {str(exc)[:300]}"}
    turns = out.of_turns()
    return {
        "turns": [str(t.stop_reason) for t in turns],
        "ended": str(out.ended.reason) if out.ended else None,
        "kinds": sorted({type(e).__name__ for e in out.events}),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3])))))
