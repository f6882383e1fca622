"""Upstream bodies are untrusted: the proxy's decoder raises only ValueError, never RecursionError."""

import pytest

from corral.proxy._sse import loads, loads_object


def test_deep_nesting_is_a_value_error_not_a_recursion_error() -> None:
    deep = b"[" * 5000 + b"]" * 5000
    with pytest.raises(ValueError):
        loads(deep)
    assert loads_object(deep) is None


def test_lone_surrogates_and_invalid_utf8_are_read() -> None:
    assert loads(b'{"t": "A\\ud83d"}')["t"].startswith("A")
    assert loads_object(b'{"t": "\xff"}') is not None
