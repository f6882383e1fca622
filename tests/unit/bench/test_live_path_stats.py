"""bench_live_path's statistics: nearest-rank percentiles and one latency per stamped event."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from benchmarks.bench_live_claude import SendTimes, token_latencies
from benchmarks.bench_live_path import envelope_ts_ns, latencies, latency_stats, percentile

from corral.events import Envelope, TextDelta, encode


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(1, 101)]  # 1 … 100
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([7.0], 0.99) == 7.0
    assert percentile([1.0, 2.0, 3.0], 0.5) == 2.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_latency_stats_are_in_milliseconds_and_unordered_input_is_sorted() -> None:
    ns = [3_000_000, 1_000_000, 2_000_000, 50_000_000]  # 3, 1, 2, 50 ms
    stats = latency_stats(ns)
    assert stats.n == 4
    assert stats.p50_ms == 2.0
    assert stats.p99_ms == 50.0
    assert stats.max_ms == 50.0


def test_an_envelope_carrying_its_stamp_twice_counts_once() -> None:
    # The event's text and the vendor line it keeps as ``raw`` both hold the stamp.
    data = (
        b'{"seq":7,"event":{"type":"text.delta","text":"[t=1000]",'
        b'"raw":{"delta":{"text":"[t=1000]"}}}}'
    )
    assert latencies(data, 4500) == [3500]


def test_distinct_stamps_each_count_and_a_line_without_one_counts_none() -> None:
    assert latencies(b"[t=100] and [t=300]", 1000) == [900, 700]
    assert latencies(b'{"type":"result"}', 1000) == []


def test_the_envelope_timestamp_is_read_as_the_session_layer_wrote_it() -> None:
    when = datetime(2026, 12, 2, 4, 0, 1, 234567, tzinfo=UTC)
    envelope = Envelope(
        session_id="s", seq=1, ts=when, source="x", event=TextDelta(text="[t=5]", message_id="m")
    )
    assert envelope_ts_ns(encode(envelope)) == 1_796_184_001_234_567_000
    assert envelope_ts_ns(encode(envelope)) == int(when.timestamp() * 1e6) * 1000
    assert envelope_ts_ns(b'{"seq":1}') is None


def test_a_token_counts_once_at_its_first_sighting_and_unsent_tokens_are_left_out() -> None:
    sent = {0: 100, 1: 200}
    found = [(0, 150), (1, 260), (0, 900), (7, 300)]  # token 0 again in the final message
    assert token_latencies(found, sent) == [50, 60]


def test_send_times_come_from_the_one_request_that_streamed_the_whole_reply() -> None:
    class Log:
        def __init__(self) -> None:
            self.calls: list[int] = []

        def progress(self, record: object, frames_sent: int) -> None:
            self.calls.append(frames_sent)

    class Server:
        requests = Log()

    times = SendTimes(Server())  # type: ignore[arg-type]
    side, main = object(), object()
    for n in (1, 2):  # a request that stopped before the text
        Server.requests.progress(side, n)
    for n in range(1, 6):  # message_start, content_block_start, three deltas
        Server.requests.progress(main, n)
    assert Server.requests.calls == [1, 2, 1, 2, 3, 4, 5]  # the log still sees every frame
    sent = times.take(3)
    assert sorted(sent) == [0, 1, 2]
    assert sent[0] <= sent[1] <= sent[2]
    with pytest.raises(RuntimeError, match="0 model requests"):
        times.take(3)  # taken once: the next turn starts empty
