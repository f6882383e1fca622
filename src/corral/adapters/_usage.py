"""One typed running total of the tokens and cost a session's ``Usage`` events report."""

from __future__ import annotations

import msgspec

from ..events import Usage

_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


class UsageTotals(msgspec.Struct, kw_only=True):
    """What ``get_usage()`` returns: the sum over every ``Usage`` event the adapter emitted.

    Every driver adds each ``Usage`` it emits (:meth:`add`), so the totals mean the same thing for
    every agent: tokens per field summed over the session's turns, as the agent reported them.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    turns: int = 0
    """How many ``Usage`` events were added."""

    def add(self, usage: Usage) -> None:
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        self.cache_read_tokens += usage.cache_read_tokens or 0
        self.cache_write_tokens += usage.cache_write_tokens or 0
        self.reasoning_tokens += usage.reasoning_tokens or 0
        self.cost_usd += usage.cost_usd or 0.0
        self.turns += 1

    def copy(self) -> UsageTotals:
        return msgspec.structs.replace(self)
