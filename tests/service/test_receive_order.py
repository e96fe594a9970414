"""Receive order follows arrival order: nothing slow runs between a request's arrival and
its stamp (JS-4.2, JS-5.1).

Structural, not timed: calls that decide races are stamped by an interceptor when they
arrive, before their message is read; their handlers pick the stamp up first and queue
their work before awaiting anything; a command's watchers are served after its
caller is answered, and a large batch of encoding runs off the event loop that stamps
requests.
"""

from __future__ import annotations

import ast
import asyncio
import collections
import inspect
import random
import textwrap
import threading
from typing import Any
from uuid import UUID, uuid4

import pytest

from domain.jungle_speed import JungleSpeed
from server import actors as actors_module
from server.actors import INLINE_ENCODINGS, Actors
from server.application import Matches
from server.hub import EventHub, Frame
from server.serve import RunningServer
from server.service import MatchService
from server.stamps import ArrivalStamps
from tests.service.helpers import NO_SPECIALS, create_and_join, stub
from tests.service.limits_helpers import until
from totem.v1 import match_service_pb2 as ms

BOUND = 30.0


def _body(function: Any) -> list[ast.stmt]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    body = node.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return body


def _calls(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
        for n in ast.walk(node)
    )


def _awaits(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Await) for n in ast.walk(node))


def test_race_calls_are_stamped_on_arrival_before_their_message_is_read() -> None:
    """The interceptor takes the stamp before it awaits anything (the rest of the call,
    its message included, comes after), for exactly the handlers that decide races."""
    body = _body(ArrivalStamps.intercept_service)
    stamping, rest = body[0], body[1:]
    assert isinstance(stamping, ast.If) and _calls(stamping, "arrival")
    assert not _awaits(stamping)
    assert any(_awaits(statement) for statement in rest)
    assert set(MatchService.RACED) == {"Act", "JoinMatch"}


async def test_the_server_stamps_acts_and_joins_on_arrival(server: RunningServer) -> None:
    """On the running server a join's stamp is issued by the interceptor, never made by
    the handler itself (which is what happens to a call that skipped the interceptor)."""
    stamper = server.actors.stamper
    on_arrival, stamp = stamper.on_arrival, stamper.stamp
    in_handler = False
    used: list[int] = []
    made_in_handler: list[int] = []

    def taking(seen_version: int) -> Any:
        nonlocal in_handler
        in_handler = True
        try:
            taken = on_arrival(seen_version)
        finally:
            in_handler = False
        used.append(taken.sequence)
        return taken

    def stamping(seen_version: int = 0) -> Any:
        made = stamp(seen_version)
        if in_handler:
            made_in_handler.append(made.sequence)
        return made

    stamper.on_arrival = taking  # type: ignore[method-assign]
    stamper.stamp = stamping  # type: ignore[method-assign]
    channel, client = stub(server.port)
    async with channel:
        await create_and_join(client, 2)
    assert len(used) == 2 and made_in_handler == []


def _nothing_awaited_before(function: Any, *handing: str) -> None:
    """``function`` awaits nothing before a statement that calls one of ``handing``."""
    for statement in _body(function):
        if any(_calls(statement, name) for name in handing):
            return
        assert not _awaits(statement), (function.__name__, ast.unparse(statement))
    raise AssertionError(f"{function.__name__} never hands its work on")


def test_race_handlers_take_their_arrival_stamp_first_and_queue_before_awaiting() -> None:
    for handler in (MatchService.Act, MatchService.JoinMatch):
        first = _body(handler)[0]
        assert isinstance(first, ast.Assign) and _calls(first, "on_arrival"), handler.__name__
    # Nothing is awaited until the work is handed to the match's actor: Act's handler
    # hands it on by a plain function; JoinMatch's by its use case, a coroutine that runs
    # in the handler's task up to its first await, the actor's run.
    _nothing_awaited_before(MatchService.Act, "_submit_act")
    _nothing_awaited_before(MatchService.JoinMatch, "join")
    _nothing_awaited_before(Matches.join, "run")
    assert not inspect.iscoroutinefunction(Matches.act)
    # ... and the actor queues it before its own first await (Act's work is queued by a
    # plain function, which cannot await).
    run = _body(Actors.run)
    assert _calls(run[0], "submit") and not _awaits(run[0])
    assert not inspect.iscoroutinefunction(MatchService._submit_act)
    assert _calls(_body(MatchService._submit_act)[-1], "act")
    assert _calls(_body(Matches.act)[-1], "submit")


def test_play_streams_stamp_each_message_as_it_is_read_and_queue_it_before_reading_on() -> None:
    """On a Play stream the reading task stamps and submits each message before it
    awaits anything, in a plain function; writing the answers is another task's work."""
    loop = next(s for s in _body(MatchService._read_plays)[0].body if isinstance(s, ast.AsyncFor))
    first = loop.body[0]
    assert _calls(first, "_play_one") and not _awaits(first)
    assert not inspect.iscoroutinefunction(MatchService._play_one)
    play_one = _body(MatchService._play_one)
    stamping = next(i for i, s in enumerate(play_one) if _calls(s, "stamp"))
    assert all(not isinstance(s, ast.Try) for s in play_one[:stamping])
    assert _calls(play_one[-1], "_submit_act")
    assert not _calls(_body(MatchService._read_plays)[0], "write")


@pytest.mark.parametrize("inline", [INLINE_ENCODINGS, 0], ids=["small batch", "large batch"])
async def test_watchers_are_served_after_the_caller_is_answered_a_large_batch_off_the_loop(
    server: RunningServer, inline: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One watcher of one event is a batch of one encoding: done on the loop, where a
    worker thread would hold the interpreter lock as long. A batch larger than
    INLINE_ENCODINGS (here, any batch) goes to a worker thread."""
    monkeypatch.setattr(actors_module, "INLINE_ENCODINGS", inline)
    encoded_on: list[int] = []
    answered_first: list[bool] = []
    encode, send = server.actors.hub.encode, server.actors.publisher.send

    def encoding(match: Any, evt: Any, key: Any) -> bytes:
        encoded_on.append(threading.get_ident())
        return encode(match, evt, key)

    server.actors.hub.encode = encoding
    channel, client = stub(server.port)
    async with channel:
        # Symbol cards only: the reveal is one event, one encoding (outward arrows on top
        # could chain into a batch too large for the loop).
        match_id, _, _ = await create_and_join(client, 2, turn_timeout_ms=0, specials=NO_SPECIALS)
        version = (await client.GetMatch(ms.GetMatchRequest(match_id=match_id))).summary.version
        watch = client.Watch(ms.WatchRequest(match_id=match_id, after_version=version))
        await until(lambda: server.actors.hub.watchers(UUID(match_id)) > 0, "the stream subscribed")

        def reveal(match: JungleSpeed) -> None:
            match.reveal(0, server.actors.stamper.stamp())

        answered = server.actors.submit(UUID(match_id), reveal)

        def sending(match_id: UUID, events: list[Any]) -> None:
            answered_first.append(answered.done())
            send(match_id, events)

        server.actors.publisher.send = sending  # type: ignore[method-assign]
        await asyncio.wait_for(answered, BOUND)
        event = await asyncio.wait_for(watch.read(), BOUND)
        watch.cancel()
    assert event.version == version + 1
    # The caller had its answer before the watchers' work began ...
    assert answered_first == [True]
    # ... and a large batch ran in a worker thread, a small one on the loop.
    assert encoded_on
    on_loop = threading.get_ident() in encoded_on
    assert on_loop is (inline > 0)


def test_a_matchs_streams_are_handed_each_event_in_an_order_drawn_afresh() -> None:
    """JS-4.2: a race is won by the first grab received, so no seat may see every reveal
    first. The streams of a match subscribed in seat order (the order the seats were
    taken); the hub hands them each event in a new order, each stream once."""
    hub = EventHub(lambda match, evt, key: b"", order=random.Random(12))
    match_id = uuid4()
    subs = [hub.subscribe(match_id, ("seat", seat)) for seat in range(6)]
    handed: list[Any] = []
    for sub in subs:
        sub.offer = lambda frame, key=sub.key: handed.append(key)  # type: ignore[method-assign]
    first: collections.Counter[Any] = collections.Counter()
    for version in range(1, 301):
        handed.clear()
        hub.deliver(match_id, {sub.key: Frame(version, b"", False) for sub in subs})
        assert sorted(handed) == sorted(sub.key for sub in subs), "each stream once"
        first[handed[0]] += 1
    assert set(first) == {sub.key for sub in subs}
    assert min(first.values()) >= 25, first  # about 50 each
