// A fork's seats taken with the tokens it printed (Client.takeSeat), played by bots to the
// end (playSeats, and `node bot.js --join MATCH --token ...`). A fork's seats are all taken
// in the origin's players' names, so nobody can join them: whoever holds a seat's token
// takes that seat. The forks here are of a Tribes match in the middle of a turn, on a
// fresh server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { TotemError, TribesBot, playSeats, seeded } from '../index.js';
import { bounded, serverFor } from './support.js';

/** A whole match is longer than one wait; still a bound, not a timing assertion. */
const MATCH_BOUND_MS = 180_000;
const BOT_JS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bot.js');

/**
 * A Tribes match of two seats (seat 0 first every round) forked after its second move: a
 * seat's turn, nothing pending. Returns the origin's seat tokens and the fork's answer.
 * @param {import('../index.js').Client} client
 */
async function tribesFork(client) {
  const created = await client.createMatch({
    game: 'tribes',
    maxPlayers: 2,
    turnTimeoutMs: 60_000,
    prearrangedCards: [[1, 2]],
  });
  const seats = [
    await client.join(created.match_id, { name: 'alice' }),
    await client.join(created.match_id, { name: 'bob' }),
  ];
  let version = 0;
  for (let move = 0; move < 2; move += 1) {
    const turn = (await client.getMatch(created.match_id)).tribes.turn;
    const view = await seats[turn].get();
    const option = view.tribes.legal.places[0];
    version = (await seats[turn].placeOption(option, option.destinations[0])).version;
  }
  const forked = await client.unary(
    'ForkMatch',
    { match_id: created.match_id, version },
    created.referee_token,
  );
  return { origin: seats.map((s) => s.token), forked };
}

/**
 * The error a promise rejects with.
 * @param {Promise<unknown>} promise
 * @returns {Promise<unknown>}
 */
function rejection(promise) {
  return promise.then(
    () => assert.fail('it was accepted'),
    (/** @type {unknown} */ e) => e,
  );
}

test('takeSeat takes the seat a fork token holds, and it plays', async (t) => {
  const { client } = await serverFor(t);
  const { forked } = await tribesFork(client);
  // Given in the other order: the server, not the order, says whose seat each is.
  const sessions = [];
  for (const token of [...forked.player_tokens].reverse()) {
    sessions.push(await client.takeSeat(forked.match_id, token));
  }
  assert.deepEqual(
    sessions.map((s) => [s.seat, s.name, s.role, s.game, s.seenVersion]),
    [
      [1, 'bob', 'VIEWER_ROLE_PLAYER', 'tribes', 1],
      [0, 'alice', 'VIEWER_ROLE_PLAYER', 'tribes', 1],
    ],
  );
  // TR-2.2: the seat whose turn it is moves on, through the session the token gave.
  const turn = (await client.getMatch(forked.match_id)).tribes.turn;
  const mover = sessions.find((s) => s.seat === turn);
  assert.ok(mover);
  const option = (await mover.get()).tribes.legal.places[0];
  const answer = await mover.placeOption(option, option.destinations[0]);
  assert.equal(Number(answer.version), 2);
});

test('takeSeat refuses a token that holds no seat in the match, saying so', async (t) => {
  const { client } = await serverFor(t);
  const { origin, forked } = await tribesFork(client);
  // The origin's tokens are not the fork's (docs/api.md, Forks).
  const old = await rejection(client.takeSeat(forked.match_id, origin[0]));
  assert.ok(old instanceof TotemError);
  assert.equal(old.code, 'UNAUTHENTICATED');
  assert.match(old.message, new RegExp(`this token holds no seat in match ${forked.match_id}`));
  const referee = await rejection(client.takeSeat(forked.match_id, forked.referee_token));
  assert.ok(referee instanceof TotemError);
  assert.equal(referee.code, 'PERMISSION_DENIED');
  assert.match(referee.message, /the referee's of match .*give a seat's token/);
  const twice = rejection(
    playSeats(client, forked.match_id, [forked.player_tokens[0], forked.player_tokens[0]], {
      game: 'tribes',
      bot: (session) => new TribesBot(session),
    }),
  );
  assert.match(String(await twice), /two of the tokens hold seat 0/);
  const otherGame = rejection(
    playSeats(client, forked.match_id, forked.player_tokens, {
      game: 'jungle_speed',
      bot: (session) => new TribesBot(session),
    }),
  );
  assert.match(String(await otherGame), /is a game of tribes, not of jungle_speed/);
});

test('bots play a fork’s seats to the end with its tokens', async (t) => {
  const { client } = await serverFor(t);
  const { forked } = await tribesFork(client);
  /** @type {string[]} */
  const seated = [];
  const result = await bounded(
    playSeats(client, forked.match_id, forked.player_tokens, {
      game: 'tribes',
      bot: (session, i) => new TribesBot(session, { thinkMs: [0, 2], random: seeded(i) }),
      onSeated: (matchId) => seated.push(matchId),
    }),
    MATCH_BOUND_MS,
  );
  assert.deepEqual(seated, [forked.match_id]);
  assert.equal(result.summary.status, 'MATCH_STATUS_ENDED');
  assert.equal(result.summary.end_reason, 'END_REASON_COMPLETED');
  assert.deepEqual(result.standings.map((s) => s.name).sort(), ['alice', 'bob']);
  const view = await client.getMatch(forked.match_id);
  assert.equal(view.summary.status, 'MATCH_STATUS_ENDED');
});

test('node bot.js --join MATCH --token ... plays a fork’s seats to the end', async (t) => {
  const { client, server } = await serverFor(t);
  const { forked } = await tribesFork(client);
  const tokens = forked.player_tokens.flatMap((/** @type {string} */ token) => ['--token', token]);
  const run = promisify(execFile);
  const { stdout, stderr } = await bounded(
    run('node', [BOT_JS, '--address', server.address, '--game', 'tribes', '--join', forked.match_id, ...tokens]),
    MATCH_BOUND_MS,
  );
  assert.match(stderr, new RegExp(`match id: ${forked.match_id}`));
  assert.match(stdout, /^Tribes, 2 bots: match ended \(completed\)/m);
  assert.match(stdout, /^ +1\. (alice|bob) \(seat [01]\)$/m);

  const wrong = await rejection(
    run('node', [BOT_JS, '--address', server.address, '--game', 'tribes', '--join', forked.match_id]
      .concat(['--token', 'not-a-token'])),
  );
  assert.match(String(/** @type {any} */ (wrong).stderr), /this token holds no seat in match/);
});
