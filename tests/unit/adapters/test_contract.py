from collections.abc import AsyncIterator

import pytest

from corral.adapters.base import BaseAdapter, construct, contract_problems, parse_version
from corral.errors import AdapterContractError, UnsupportedOperation
from corral.events import Event, TextComplete, TurnCompleted


class Echo(BaseAdapter):
    agent_id = "echo"
    display_name = "Echo"
    cap_thinking = True
    provides_models = False
    provides_usage = False

    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = cwd
        self.texts: list[str] = []

    async def start(self, session_id: str):  # type: ignore[no-untyped-def]
        return self.make_agent_info(version="1.0", slash_commands=["/echo", "/status"])

    async def send(self, text, attachments=None) -> None:  # type: ignore[no-untyped-def]
        self.texts.append(text)

    async def stream(self) -> AsyncIterator[Event]:
        for t in self.texts:
            yield TextComplete(text=f"You said: {t}")
            yield TurnCompleted()

    async def stop(self) -> None:
        pass


async def test_a_compliant_adapter_works() -> None:
    a = construct(Echo, cwd="/tmp")
    assert isinstance(a, Echo) and a.cwd == "/tmp"
    with pytest.raises(UnsupportedOperation, match="'effort'"):
        construct(Echo, cwd="/tmp", effort="high")  # never silently dropped
    info = await a.start("s1")
    assert info.capabilities.thinking and not info.capabilities.cancel
    assert info.slash_commands[:3] == ("/status", "/stop", "/model")
    assert info.slash_commands.count("/status") == 1 and "/echo" in info.slash_commands
    await a.send("hi")
    assert [type(e).__name__ async for e in a.stream()] == ["TextComplete", "TurnCompleted"]
    with pytest.raises(UnsupportedOperation):
        await a.interrupt()


def test_missing_explicit_flag_raises_type_error_at_definition() -> None:
    with pytest.raises(TypeError, match="provides_models must be declared"):

        class NoFlags(BaseAdapter):
            agent_id = "x"
            display_name = "X"
            provides_usage = False

            async def start(self, session_id):  # type: ignore[no-untyped-def]
                ...

            async def send(self, text, attachments=None):  # type: ignore[no-untyped-def]
                ...

            async def stream(self):  # type: ignore[no-untyped-def]
                yield

            async def stop(self):  # type: ignore[no-untyped-def]
                ...


def test_every_problem_is_reported() -> None:
    with pytest.raises(AdapterContractError) as info:

        class Bad(BaseAdapter):
            agent_id = "bad id!"
            provides_models = True
            provides_usage = "no"  # type: ignore[assignment]
            cap_cancel = 1  # type: ignore[assignment]

            def start(self, session_id):  # type: ignore[no-untyped-def]  # not async
                ...

    msg = str(info.value)
    for part in [
        "display_name",
        "agent_id 'bad id!'",
        "provides_usage must be a bool",
        "cap_cancel must be a bool",
        "start() must be a coroutine",
        "send() must be implemented",
        "stream() must be implemented",
        "stop() must be implemented",
        "list_models() is not overridden",
    ]:
        assert part in msg, part


def test_abstract_intermediate_bases_are_allowed() -> None:
    class Mid(BaseAdapter, abstract=True):
        pass

    class Leaf(Mid):
        agent_id = "leaf"
        display_name = "Leaf"
        provides_models = False
        provides_usage = False
        start = Echo.start
        send = Echo.send
        stream = Echo.stream
        stop = Echo.stop

    assert contract_problems(Leaf) == []
    assert contract_problems(Mid)  # Mid itself would not pass


def test_construct_passes_given_options_and_rejects_unknown() -> None:
    class Kw(Echo):
        def __init__(self, **kw: object) -> None:
            self.kw = kw

    assert construct(Kw, cwd="/tmp", model="m").kw == {"cwd": "/tmp", "model": "m"}  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        construct(Echo, colour="red")


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("2.1.197 (Claude Code)", "2.1.197"),
        ("codex-cli 0.171.0\n", "0.171.0"),
        ("opencode 1.18.33", "1.18.33"),
        ("no version", None),
        ("v0.61.0-nightly.1", "0.61.0-nightly.1"),
    ],
)
def test_parse_version(text: str, version: str | None) -> None:
    assert parse_version(text) == version


def test_a_coroutine_stream_breaks_the_contract_an_iterator_returning_one_does_not() -> None:
    class Bad(Echo, abstract=True):  # abstract: checked below instead of at definition
        agent_id = "bad"

        async def stream(self) -> list[Event]:  # type: ignore[override]  # no yield
            return []

    class Good(Echo, abstract=True):
        agent_id = "good"

        def stream(self) -> AsyncIterator[Event]:
            return Echo.stream(self)

    stream_problems = [p for p in contract_problems(Bad) if "stream" in p]
    assert stream_problems == ["stream() must be an async generator (async def with yield)"]
    assert contract_problems(Good) == []
    assert contract_problems(Echo) == []
