"""``totem-replay step`` and the viewer options of ``events``: the state rebuilt at every
version of a recorded match is the state the live aggregate had then (TR-7.3 and the
same for every game), stepping back then forwards gives identical states, and a viewer
sees exactly what the domain's redaction (the server's) showed it (JS-2.1, TR-6.1,
VI-5)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from replay_support import Stamps, as_referee, json_lines, open_store, play
from test_replay_tribes import play as play_tribes
from test_replay_village import ZERO
from test_replay_village import play as play_village

from domain.games import game_of
from domain.jungle_speed import JungleSpeed
from domain.jungle_speed import Options as JungleSpeedOptions
from domain.kernel.match import MatchAggregate, event_name
from domain.kernel.views import Viewer
from domain.tribes import Options as TribesOptions
from domain.tribes import Tribes
from domain.village import Options as VillageOptions
from domain.village import Village
from entrypoints.totem_replay import main
from replay.step import Command, Output, Stepper, interactive, kind_key, parse_script, viewer_of
from replay.store import ReplayError, read_records
from storage.arena import Arena

SECRET = bytes(range(100, 132))


def plain(value: Any) -> Any:
    """A view as it reads back from JSON: what the tool prints is compared with it."""
    return json.loads(json.dumps(value, default=str))


@dataclass
class Live:
    """What the live aggregate showed after every version while it was being played."""

    match: MatchAggregate | None = None
    referee: dict[int, Any] = field(default_factory=dict)
    seat0_state: dict[int, Any] = field(default_factory=dict)
    seat0_event: dict[int, Any] = field(default_factory=dict)
    referee_event: dict[int, Any] = field(default_factory=dict)
    spectator_event: dict[int, Any] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)

    def capture(self, match: MatchAggregate, event: object | None) -> None:
        game, version = game_of(match), match.version
        self.referee[version] = plain(game.state_view(match, Viewer.referee()))
        if match.players:
            self.seat0_state[version] = plain(game.state_view(match, Viewer.player(0)))
        if event is not None:
            self.names[version] = event_name(event)
            self.referee_event[version] = plain(game.event_view(match, event, Viewer.referee())[1])
            self.seat0_event[version] = plain(game.event_view(match, event, Viewer.player(0))[1])
            self.spectator_event[version] = plain(
                game.event_view(match, event, Viewer.spectator())[1]
            )


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    """Every event triggered on a match is followed by a capture of its views, as the
    server takes them: from the live aggregate, right after the event was applied."""
    seen = Live()
    trigger = MatchAggregate.trigger_event

    def capturing(self: MatchAggregate, event_class: Any, **kwargs: Any) -> None:
        trigger(self, event_class, **kwargs)
        if self is seen.match:
            seen.capture(self, self._pending_events[-1])  # type: ignore[attr-defined]

    monkeypatch.setattr(MatchAggregate, "trigger_event", capturing)
    yield seen


def _start(live: Live, arena: Arena, factory: Callable[[bytes], MatchAggregate]) -> Any:
    created = arena.create_match(factory)
    live.match = created
    live.capture(created, None)
    return created


def record_jungle_speed(arena: Arena, live: Live) -> MatchAggregate:
    stamps = Stamps()
    options = JungleSpeedOptions(variant="ES", max_players=3)
    match = _start(live, arena, lambda seed: JungleSpeed.create(options, seed, b"\x01"))
    for seat in range(3):
        match.join(f"player{seat}", bytes([seat, 1]), f"hash-{seat}", stamps())
    play(match, stamps, random.Random(3), 160)
    arena.save(match)
    return match


def record_tribes(arena: Arena, live: Live) -> MatchAggregate:
    stamps = Stamps()
    options = TribesOptions(max_players=2, extended=True)
    match = _start(live, arena, lambda seed: Tribes.create(options, seed, b"\x05"))
    for seat in range(2):
        match.join(f"tribe{seat}", bytes([seat, 9]), f"hash-{seat}", stamps())
    play_tribes(match, stamps, random.Random(4), 120)
    arena.save(match)
    return match


def record_village(arena: Arena, live: Live) -> MatchAggregate:
    stamps = Stamps()
    options = VillageOptions(max_players=3, **ZERO)
    match = _start(live, arena, lambda seed: Village.create(options, seed, b"\x05", secret=SECRET))
    for seat in range(3):
        match.join(f"chief{seat}", bytes([seat, 7]), f"hash-{seat}", stamps())
    play_village(match, stamps, 140)
    arena.save(match)
    return match


RECORDERS = {
    "jungle_speed": record_jungle_speed,
    "tribes": record_tribes,
    "village": record_village,
}


@dataclass
class Recorded:
    db: Path
    match: MatchAggregate
    live: Live

    def run(self, *args: object, input: str | None = None) -> Result:
        argv: Sequence[str] = ["--db", str(self.db), *as_referee(args)]
        return CliRunner().invoke(main, argv, input=input)

    def stepper(self, every: int = 16) -> Stepper:
        arena = open_store(self.db)
        try:
            return Stepper(read_records(arena, self.match.id), every)
        finally:
            arena.close()


@pytest.fixture(params=sorted(RECORDERS))
def recorded(request: pytest.FixtureRequest, tmp_path: Path, live: Live) -> Recorded:
    db = tmp_path / "totem.db"
    arena = open_store(db)
    try:
        match = RECORDERS[request.param](arena, live)
    finally:
        arena.close()
    assert set(live.referee) == set(range(1, match.version + 1)), "a version was not captured"
    return Recorded(db, match, live)


def referee_view(stepper: Stepper) -> Any:
    return plain(game_of(stepper.state).state_view(stepper.state, Viewer.referee()))


# ---- the state at every version (TR-7.3, JS-10, VI: replays reproduce every state) ----


def test_at_every_version_equals_the_live_aggregate(recorded: Recorded) -> None:
    """``at --json`` at every version of the match is the referee view the live
    aggregate had right after that version's event was applied."""
    for version in range(1, recorded.match.version + 1):
        shown = recorded.run("at", recorded.match.id, version, "--json")
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.output) == recorded.live.referee[version], version


def test_stepper_at_every_version_equals_the_live_aggregate(recorded: Recorded) -> None:
    stepper = recorded.stepper(every=5)
    assert stepper.last == recorded.match.version
    assert referee_view(stepper) == recorded.live.referee[1]
    while stepper.forward():
        assert referee_view(stepper) == recorded.live.referee[stepper.version], stepper.version
    # Jumps in any order land on the same states, backwards ones from a kept state.
    order = list(range(1, stepper.last + 1))
    random.Random(7).shuffle(order)
    for version in order:
        stepper.goto(version)
        assert referee_view(stepper) == recorded.live.referee[version], version
    seat0 = recorded.live.seat0_state
    for version in sorted(seat0)[::7]:
        stepper.goto(version)
        view = game_of(stepper.state).state_view(stepper.state, Viewer.player(0))
        assert plain(view) == seat0[version], version


def test_back_then_forward_returns_identical_states(recorded: Recorded) -> None:
    stepper = recorded.stepper(every=4)
    stepper.goto(stepper.last)
    going_back = {stepper.version: (referee_view(stepper), stepper.state.digest)}
    while stepper.back():
        going_back[stepper.version] = (referee_view(stepper), stepper.state.digest)
    assert stepper.version == 1 and not stepper.back()
    while stepper.forward():
        state = (referee_view(stepper), stepper.state.digest)
        assert state == going_back[stepper.version], stepper.version
    assert not stepper.forward() and stepper.version == recorded.match.version
    assert stepper.state.digest == recorded.match.digest


def test_back_does_not_disturb_the_kept_states(recorded: Recorded) -> None:
    """Applying events mutates a state in place: the kept copies must stay untouched, so
    a second trip back and forth gives the same states as the first."""
    stepper = recorded.stepper(every=3)
    for _ in range(2):
        for version in (stepper.last, 2, stepper.last - 1, 1, stepper.last // 2):
            stepper.goto(version)
            assert referee_view(stepper) == recorded.live.referee[version]


def test_next_of_a_kind_finds_the_next_such_event(recorded: Recorded) -> None:
    stepper = recorded.stepper()
    for kind, names in stepper.kinds.items():
        stepper.goto(1)
        found = stepper.find(kind)
        expected = next(
            (v for v, n in sorted(recorded.live.names.items()) if n in names and v > 1), None
        )
        assert found == expected, kind
        if found is not None:
            stepper.goto(found)
            assert event_name(stepper.event) in names
            assert stepper.find(kind, forwards=False) in (
                None,
                *[v for v, n in recorded.live.names.items() if n in names and v < found],
            )
    with pytest.raises(ReplayError, match="no kind of event"):
        stepper.find("no such kind")


# ---- the viewer options: exactly what the viewer saw (JS-2.1, TR-6.1, VI-5) -----------


def test_events_as_a_seat_or_spectator_equal_the_servers_redaction(recorded: Recorded) -> None:
    for option, expected in (
        (("--seat", 0), recorded.live.seat0_event),
        (("--spectator",), recorded.live.spectator_event),
    ):
        shown = recorded.run("events", recorded.match.id, *option, "--json")
        assert shown.exit_code == 0, shown.output
        views = {line["version"]: line["view"] for line in json_lines(shown.output)}
        for version, view in expected.items():
            assert views[version] == view, (option, version)
        assert all("hashed" not in line for line in json_lines(shown.output))
    # The redaction is at work: the seat was shown less than the referee somewhere.
    live = recorded.live
    hidden_states = [v for v in live.seat0_state if live.seat0_state[v] != live.referee[v]]
    assert hidden_states
    if type(recorded.match).GAME != "tribes":  # Tribes hides stacks, never an event's fields
        assert [v for v in live.seat0_event if live.seat0_event[v] != live.referee_event[v]]


def test_step_as_a_seat_shows_that_seats_state(recorded: Recorded) -> None:
    version = recorded.match.version // 2
    shown = recorded.run("step", recorded.match.id, "--seat", 0, "--to", version, "--json")
    assert shown.exit_code == 0, shown.output
    (line,) = json_lines(shown.output)
    assert line["version"] == version
    assert line["state"] == recorded.live.seat0_state[version]
    assert line["event_view"] == recorded.live.seat0_event[version]


@pytest.fixture
def jungle(tmp_path: Path, live: Live) -> Recorded:
    db = tmp_path / "totem.db"
    arena = open_store(db)
    try:
        match = record_jungle_speed(arena, live)
    finally:
        arena.close()
    return Recorded(db, match, live)


def test_js_2_1_a_seat_never_sees_the_deck_nor_other_face_down_cards(jungle: Recorded) -> None:
    """The deal's deck order is the face-down piles: the referee sees it, seat 0 and a
    spectator only counts (JS-2.1)."""
    dealt = next(v for v, n in jungle.live.names.items() if n == "Dealt")
    referee = json_lines(jungle.run("events", jungle.match.id, "--json").output)
    assert "deck" in referee[dealt - 1]["view"]
    for option in (("--seat", 1), ("--spectator",)):
        lines = json_lines(jungle.run("events", jungle.match.id, *option, "--json").output)
        assert "deck" not in lines[dealt - 1]["view"]
        assert lines[dealt - 1]["view"]["face_down_counts"]
    text = jungle.run("step", jungle.match.id, "--seat", 1, "--to", dealt).output
    assert "hidden from this viewer" in text and "face down (top first)" not in text
    board = jungle.run("step", jungle.match.id, "--to", dealt).output
    assert "face down (top first)" in board


def test_events_for_a_seat_nobody_took_is_one_clear_error(jungle: Recorded) -> None:
    shown = jungle.run("events", jungle.match.id, "--seat", 7)
    assert shown.exit_code == 2
    assert shown.output.strip().splitlines()[-1].startswith("Error: seat 7 is not taken")
    both = jungle.run("events", jungle.match.id, "--seat", 0, "--spectator")
    assert both.exit_code == 2 and "choose one of --seat, --spectator and --referee" in both.output


# ---- the script language and the non-interactive command ------------------------------


def test_script_parses_commands_per_line_and_semicolon() -> None:
    script = "next; back 2\ngoto 40  # a comment\nnext round end\nn;p;first;last;show;kinds"
    assert parse_script(script) == [
        Command("next"),
        Command("back", 2),
        Command("goto", 40),
        Command("next", kind="round end"),
        Command("next"),
        Command("back"),
        Command("first"),
        Command("last"),
        Command("show"),
        Command("kinds"),
    ]
    assert kind_key("Round_End") == kind_key("round-end") == kind_key("round  end")
    for bad in ("jump 3", "goto", "goto x", "first 2"):
        with pytest.raises(ReplayError, match="script line 1"):
            parse_script(bad)


def test_scripted_step_prints_each_step_it_arrives_at(jungle: Recorded) -> None:
    duel = next(v for v, n in sorted(jungle.live.names.items()) if n == "DuelWon" and v > 6)
    shown = jungle.run(
        "step",
        jungle.match.id,
        "--script",
        "goto 6; next; back; next 2; back 2; next duel",
        "--json",
    )
    assert shown.exit_code == 0, shown.output
    steps = json_lines(shown.output)
    assert [s["version"] for s in steps] == [6, 7, 6, 8, 6, duel]
    assert steps[0] == steps[2] == steps[4]
    assert steps[-1]["event"] == "DuelWon"
    assert steps[-1]["state"] == jungle.live.referee[duel]


def test_scripted_step_as_text_draws_the_event_and_the_board(
    jungle: Recorded, tmp_path: Path
) -> None:
    script = tmp_path / "walk.txt"
    script.write_text("next reveal\nnext duel\n")
    shown = jungle.run("step", jungle.match.id, "--to", 3, "--script", str(script))
    assert shown.exit_code == 0, shown.output
    text = shown.output
    assert text.count("Version ") == 3
    assert f"Version 3 of {jungle.match.version}" in text
    assert "Revealed" in text and "reveals" in text and "DuelWon" in text
    assert "Open duels:" in text and "Pot (" in text


def test_step_reads_a_script_from_stdin_when_it_is_not_a_terminal(jungle: Recorded) -> None:
    shown = jungle.run("step", jungle.match.id, "--json", input="goto 9\nback\n")
    assert shown.exit_code == 0, shown.output
    assert [s["version"] for s in json_lines(shown.output)] == [1, 9, 8]


def test_step_says_when_it_cannot_move(jungle: Recorded) -> None:
    last = jungle.match.version
    shown = jungle.run("step", jungle.match.id, "--script", "back; last; next; next end", "--json")
    lines = json_lines(shown.output)
    notes = [line["note"] for line in lines if "note" in line]
    assert notes[0] == "already at the first"
    assert notes[1] == "already at the last version"
    assert notes[2] == f"no end event after version {last}"
    assert shown.exit_code == 0


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("goto 100000", "there is no version 100000"),
        ("next teleport", "no kind of event 'teleport'"),
        ("dance", "unknown command 'dance'"),
    ],
)
def test_step_errors_are_one_line_exit_2(jungle: Recorded, script: str, message: str) -> None:
    shown = jungle.run("step", jungle.match.id, "--script", script)
    assert shown.exit_code == 2
    assert message in shown.output.strip().splitlines()[-1]


def test_step_help_documents_the_script_language() -> None:
    shown = CliRunner().invoke(main, ["step", "--help"])
    for word in ("goto V", "next KIND", "--script", "--to", "--seat", "duel", "round-end"):
        assert word in shown.output


def test_keys_move_forwards_backwards_and_quit(
    jungle: Recorded, capsys: pytest.CaptureFixture[str]
) -> None:
    """The interactive walk: n / → forwards, p / ← backwards, l last, ? kinds, an unknown
    key ignored, q quits; each move draws the step it arrives at."""
    stepper = jungle.stepper()
    out = Output(stepper, viewer_of(None, False), as_json=True)
    keys = iter(["n", "\x1b[C", "\x1b[D", "l", "p", "?", "x", "q", "n"])
    interactive(stepper, out, lambda: next(keys))
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line[:1] == "{"]
    last = jungle.match.version
    assert [p["version"] for p in printed if "version" in p] == [1, 2, 3, 2, last, last - 1]
    assert any(p.get("note", "").startswith("kinds: ") for p in printed)
    assert next(keys) == "n"  # q stopped the walk: the last key was never read


def test_a_seat_before_it_is_taken_sees_what_a_spectator_saw(jungle: Recorded) -> None:
    """Seat 2 is taken at version 4: before, its player could only watch."""
    shown = jungle.run("step", jungle.match.id, "--seat", 2, "--script", "show; next 3", "--json")
    assert shown.exit_code == 0, shown.output
    first, joined = json_lines(shown.output)
    assert first["seen_by"] == "a spectator (seat 2 not taken yet)"
    assert joined["version"] == 4 and joined["seen_by"] == "seat 2"
    never = jungle.run("step", jungle.match.id, "--seat", 3, "--to", 5)
    assert never.exit_code == 2
    assert "seat 3 is never taken in this match (3 seats taken)" in never.output
