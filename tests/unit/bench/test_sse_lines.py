"""The benchmarks' SSE framing: what an observer of ``corral serve`` counts as one event."""

from __future__ import annotations

from benchmarks._serve_session import SseLines

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"


def test_the_http_head_is_skipped_even_when_split() -> None:
    frames = SseLines()
    assert frames.feed(HEAD[:10]) == []
    assert not frames.attached
    assert frames.feed(HEAD[10:] + b"id: 1\nevent: status\ndata: {}\n\n") == [(b"status", b"{}")]
    assert frames.attached


def test_an_event_split_across_reads_comes_out_once_whole() -> None:
    frames = SseLines()
    frames.feed(HEAD)
    assert frames.feed(b"id: 2\nevent: text.de") == []
    assert frames.feed(b'lta\ndata: {"text":"hel') == []
    assert frames.feed(b'lo"}\n\nid: 3\nevent: turn.completed\ndata: {}\n\n') == [
        (b"text.delta", b'{"text":"hello"}'),
        (b"turn.completed", b"{}"),
    ]


def test_a_keepalive_comment_is_no_event_and_the_type_resets_after_a_message() -> None:
    frames = SseLines()
    frames.feed(HEAD)
    assert frames.feed(b": keepalive\n\n") == []
    assert frames.feed(b"event: status\ndata: 1\n\ndata: 2\n\n") == [
        (b"status", b"1"),
        (b"message", b"2"),
    ]
