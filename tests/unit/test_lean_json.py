"""``corral._lean_json.loads`` reads what ``json.loads`` reads, as it reads it, and refuses the rest.

It runs before ``corral run``'s early spawn in place of ``json`` (decision 057), so every
document is held to ``json.loads`` of the same bytes: the same value (``repr`` tells ``-0.0``
from ``0.0``, ``1`` from ``1.0``, and keeps the key order), or a ``ValueError`` from both.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral import _lean_json
from corral._lean_json import loads

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_space = st.text(alphabet=" \t\n\r", max_size=3)


def _same_as_json(data: bytes) -> None:
    try:
        expected: Any = json.loads(data)
    except ValueError:
        with pytest.raises(ValueError):
            loads(data)
        return
    got = loads(data)
    assert type(got) is type(expected)
    assert repr(got) == repr(expected)


@settings(max_examples=300)
@given(
    _values,
    st.sampled_from([None, 0, 2]),
    st.booleans(),
    _space,
    _space,
)
def test_a_document_reads_as_json_reads_it(
    value: Any, indent: int | None, ascii_only: bool, before: str, after: str
) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    _same_as_json((before + text + after).encode("utf-8", "surrogatepass"))


@settings(max_examples=300)
@given(_values, st.integers(min_value=0), st.binary(max_size=3))
def test_a_damaged_document_is_refused_or_read_as_json_does(
    value: Any, where: int, junk: bytes
) -> None:
    data = json.dumps(value).encode("utf-8", "surrogatepass")
    cut = where % (len(data) + 1)
    _same_as_json(data[:cut] + junk + data[cut + len(junk) :])
    _same_as_json(data[:cut])


@settings(max_examples=300)
@given(st.binary(max_size=40))
def test_any_bytes_are_refused_or_read_as_json_does(data: bytes) -> None:
    _same_as_json(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   ",
        b"{}",
        b'{"a": 1} {"b": 2}',
        b'{"a": 1}  x',
        b'{"a": 1,}',
        b'"\\ud800"',  # a lone surrogate escape
        b'"\xed\xa0\x80"',  # a surrogate in UTF-8: json.loads passes it through
        b"\xef\xbb\xbf" + b'{"a": 1}',  # a UTF-8 BOM: json.loads drops it
        '{"a": "é"}'.encode("utf-16"),  # UTF-16 with its BOM
        '{"a": 1}'.encode("utf-16-le"),  # UTF-16 without one
        '{"a": 1}'.encode("utf-32"),
        '"é"'.encode(),  # not ASCII in the first four bytes
        b"\xff",
        b"NaN",
        b"-Infinity",
        b"[1e999, -1e999, 1E400]",
        b"1" * 5000,  # past the int digits limit: json.loads refuses it
        b'{"a": \x01}',
        b'"a\tb"',  # a control character in a string: refused by the strict scanner
    ],
)
def test_the_edges_of_the_format(data: bytes) -> None:
    _same_as_json(data)


def test_without_the_c_scanner_it_is_json_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_lean_json, "_scan", None)
    assert loads(b' {"a": [1, 2.5]} ') == {"a": [1, 2.5]}
    with pytest.raises(json.JSONDecodeError):
        loads(b'{"a": }')
