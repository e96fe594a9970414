"""A match's refusal log (domain.kernel.refusals): a hash chain of its own, bounded per
seat, and redacted for everyone but the refused player and the referee."""

from __future__ import annotations

from uuid import uuid4

import pytest

from domain.kernel.chain import GENESIS_DIGEST, stored_event_digest
from domain.kernel.refusals import Refusal, RefusalLog, refusal_log_id, refusal_view
from domain.kernel.views import Viewer


def _refusal(receive: int, seat: int | None = 1) -> Refusal:
    stamp = {"sequence": receive, "monotonic_ns": 1, "wall_ns": 2, "seen_version": 3}
    return Refusal(
        receive, 3, seat, "jungle_speed.grab", "jungle_speed {grab {}}", "FAILED_PRECONDITION",
        "JS-8.1", "seat 1 has finished and left the game", stamp,
    )  # fmt: skip


def test_the_log_is_a_chain_whose_id_follows_from_the_match() -> None:
    match_id = uuid4()
    log = RefusalLog.open(match_id, quota=5)
    log.keep(_refusal(2))
    log.count_not_kept(1, 3)
    events = log.collect_events()
    assert log.id == refusal_log_id(match_id) != match_id
    assert [type(e).__name__ for e in events] == ["Opened", "Refused", "NotKept"]
    assert events[0].prev_digest == GENESIS_DIGEST
    assert all(stored_event_digest(e) == e.digest for e in events)
    assert [e.prev_digest for e in events[1:]] == [e.digest for e in events[:-1]]


def test_each_seat_has_its_quota_and_numbers_only_grow() -> None:
    log = RefusalLog.open(uuid4(), quota=1)
    log.keep(_refusal(2, seat=1))
    assert not log.keeps(1) and log.keeps(0) and log.keeps(None)
    with pytest.raises(ValueError, match="quota"):
        log.keep(_refusal(3, seat=1))
    with pytest.raises(ValueError, match="not after"):
        log.keep(_refusal(2, seat=0))
    log.keep(_refusal(3, seat=None))  # the referee's own quota
    assert [r.receive for r in log.refusals] == [2, 3] and log.last_receive == 3


def test_only_the_refused_player_and_the_referee_see_what_the_command_said() -> None:
    refusal = _refusal(4, seat=1)
    for viewer in (Viewer.referee(), Viewer.player(1)):
        assert refusal_view(refusal, viewer)["message"] == "seat 1 has finished and left the game"
    for viewer in (Viewer.player(0), Viewer.spectator()):
        view = refusal_view(refusal, viewer)
        assert "message" not in view and "command" not in view
        assert (view["seat"], view["action"], view["rule"]) == (1, "jungle_speed.grab", "JS-8.1")
