"""A whole Village match played by keys: a real `totem play village` in a pseudo-terminal,
against a real server and the player's bots, to its end.

The test is the person at the keyboard: it presses enter (send the selected decision's
draft) over and over, as one who accepts every draft would, and a spectator's stream says
when the match is over. The deadlines are an hour, so no deadline answers for the user:
the referee's events show every decision of the user's families sent by a key (none
`by_default`), then q quits and the command prints the match id.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pty
import struct
import sys
import termios

from server.serve import RunningServer
from tests.service.helpers import ORGANISER_TOKEN
from totem_client import connect
from totem_client.messages import MatchEvent

#: The terminal's size: rows, columns.
ROWS, COLUMNS = 48, 140
#: Bound on the whole match, so that a broken test fails instead of hanging; nothing
#: checks how fast the match goes.
MATCH_BOUND = 600.0
#: How often the person presses enter, seconds (a key more or less changes nothing:
#: one pressed while nothing is owed says so on the notice line).
PRESS_EVERY = 0.05


async def _match_id(address: str) -> str:
    """The one match on the test's server, once the player has created it."""
    async with connect(address, organiser_token=ORGANISER_TOKEN) as client:
        while True:
            async for page in client.list_matches():
                if page.matches:
                    return page.matches[0].match_id
            await asyncio.sleep(0.1)


async def test_a_whole_match_played_by_keys_in_a_terminal(server: RunningServer) -> None:
    address = f"127.0.0.1:{server.port}"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "TOTEM_ORGANISER_TOKEN": ORGANISER_TOKEN,
        "COLUMNS": str(COLUMNS),
        "LINES": str(ROWS),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from entrypoints.totem import main; main()",
        "play",
        "village",
        "--address",
        address,
        "--name",
        "alice",
        "--bot-think-ms",
        "0",
        "0",
        "--deadline-ms",
        "3600000",
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    screen = bytearray()
    loop = asyncio.get_running_loop()

    def drain() -> None:
        with contextlib.suppress(OSError):
            screen.extend(os.read(master, 65536))

    loop.add_reader(master, drain)
    events: list[MatchEvent] = []
    found: list[str] = []

    async def press_until_over() -> None:
        match_id = await _match_id(address)
        found.append(match_id)
        async with connect(address, organiser_token=ORGANISER_TOKEN) as client:
            watcher = client.spectate(match_id)
            async with watcher.watch(after_version=0) as stream:
                presser = asyncio.create_task(press())
                try:
                    async for event in stream:
                        events.append(event)
                finally:
                    presser.cancel()

    async def press() -> None:
        while True:
            os.write(master, b"\r")
            await asyncio.sleep(PRESS_EVERY)

    try:
        await asyncio.wait_for(press_until_over(), MATCH_BOUND)
        os.write(master, b"q")
        code = await asyncio.wait_for(process.wait(), 60)
    finally:
        loop.remove_reader(master)
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(master)
    text = screen.decode(errors="replace")
    assert code == 0, text[-2000:]
    assert events[-1].WhichOneof("event") == "match_ended"
    assert found and found[0] in text  # printed when the player quits
    # Every decision of alice's families (0 and 2, VI-7.1) was sent by her keys.
    answered = by_default = 0
    for event in events:
        if event.WhichOneof("event") != "village":
            continue
        body = getattr(event.village, event.village.WhichOneof("event") or "")
        if "by_default" in body.DESCRIPTOR.fields_by_name and body.family in (0, 2):
            answered += 1
            by_default += body.by_default
    assert answered > 0 and by_default == 0, (answered, by_default)
