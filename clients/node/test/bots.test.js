// Tables of Node bots play whole Jungle Speed matches from their streams alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { JungleSpeedBot, connect, playTable } from '../index.js';
import {
  BOUND_MS,
  NO_SPECIALS,
  bounded,
  kind,
  recordCalls,
  serverFor,
  ORGANISER_TOKEN,
} from './support.js';

/** Short, so that a bot that stops playing is replaced by the timer and no test hangs. */
const TURN_TIMEOUT_MS = 200;
/** A whole match is longer than one wait; still a bound, not a timing assertion. */
const MATCH_BOUND_MS = 240_000;

/**
 * What a player may see of a referee's state: the referee alone sees the face-down piles
 * and a prearranged deal; a player alone has legal actions.
 * @param {Record<string, any>} state a JungleSpeedState
 */
function seen(state) {
  const { legal: _legal, ...rest } = state;
  return {
    ...rest,
    options: { ...rest.options, prearranged_deal: [] },
    seats: rest.seats.map((/** @type {any} */ seat) => ({ ...seat, face_down: [] })),
  };
}

for (const [players, variant] of /** @type {const} */ ([
  [2, 'ES'],
  [3, 'RU'],
  [4, 'ES'],
  [4, 'RU'],
])) {
  test(`${players} bots play a whole ${variant} match from the stream alone`, {
    timeout: MATCH_BOUND_MS + BOUND_MS,
  }, async (t) => {
    const { server, client } = await serverFor(t);
    // The bots have a client of their own, whose every call is recorded.
    /** @type {string[]} */
    const calls = [];
    const botClient = connect(server.address, {
    organiserToken: ORGANISER_TOKEN,
      channelOptions: { interceptors: [recordCalls(calls)] },
    });
    t.after(() => botClient.close());
    /** @type {Promise<Record<string, any>[]>[]} */
    const spectators = [];
    const result = await bounded(
      playTable(botClient, players, {
        variant,
        turnTimeoutMs: TURN_TIMEOUT_MS,
        seed: 7,
        onSeated: (matchId) => spectators.push(collect(client, matchId)),
      }),
      MATCH_BOUND_MS,
    );
    const events = await bounded(spectators[0]);

    // After the joins, the bots only watched and played on Play streams (JS-5.1): no
    // GetMatch, no Act, ever.
    const methods = calls.map((p) => p.split('/').pop());
    assert.deepEqual(methods.slice(0, players + 1), [
      'CreateMatch',
      ...Array(players).fill('JoinMatch'),
    ]);
    assert.deepEqual(new Set(methods.slice(players + 1)), new Set(['Watch', 'Play']));

    const referee = await client.getMatch(result.matchId, { token: result.created.referee_token });
    assert.equal(referee.role, 'VIEWER_ROLE_REFEREE');
    assert.equal(referee.summary.status, 'MATCH_STATUS_ENDED');
    assert.equal(referee.summary.end_reason, 'END_REASON_COMPLETED');
    assert.deepEqual(referee.summary.result.map((/** @type {any} */ p) => p.seat).sort(), [
      ...Array(players).keys(),
    ]);
    // Each bot's last state, from its own stream, is the referee's on every field a
    // player may see.
    for (const [seat, state] of result.states.entries()) {
      assert.deepEqual(state.summary, referee.summary, `seat ${seat}'s summary`);
      assert.deepEqual(seen(state.jungle_speed), seen(referee.jungle_speed), `seat ${seat}`);
      assert.deepEqual(state.jungle_speed.legal, {
        start: false,
        reveal: false,
        reveal_not_before_ms: 0,
        grabs: [],
      });
      assert.ok(state.jungle_speed.seats.every((/** @type {any} */ s) => s.face_down.length === 0));
    }
    assert.ok(referee.jungle_speed.seed.length > 0, 'the seed is public at the end');

    // The spectator's stream ended by itself with the match: every event once, in order.
    assert.deepEqual(
      events.map((e) => e.version),
      Array.from({ length: referee.summary.version }, (_, i) => i + 1),
    );
    assert.equal(kind(events.at(-1) ?? {}), 'match_ended');
    // The bots played: every seat revealed on its turn, someone won a race, and no
    // refused command was sent again before the match changed.
    const turnReveals = events.filter(
      (e) => kind(e) === 'revealed' && e.jungle_speed.revealed.cause === 'REVEAL_CAUSE_TURN',
    );
    assert.deepEqual(
      new Set(turnReveals.map((e) => e.jungle_speed.revealed.seat)),
      new Set(Array(players).keys()),
    );
    assert.equal(
      result.bots.reduce((sum, bot) => sum + bot.stats.reveals, 0),
      turnReveals.length,
    );
    assert.ok(events.some((e) => ['duel_won', 'arrows_won'].includes(kind(e))));
    // Every reveal on a turn was a command read on a Play stream (JS-5.1).
    assert.ok(turnReveals.every((e) => e.jungle_speed.revealed.stamp.on_stream));
    for (const bot of result.bots) {
      const refusals = bot.stats.refusals.map((r) => JSON.stringify(r));
      assert.equal(new Set(refusals).size, refusals.length);
    }
  });
}

test('a bot needs a seat', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({ maxPlayers: 2 });
  assert.throws(() => new JungleSpeedBot(client.spectate(created.match_id)), TypeError);
  const alice = await client.join(created.match_id, { name: 'alice' });
  assert.throws(() => new JungleSpeedBot(alice, { reactionMs: [50, 10] }), RangeError);
});

test('bots break a round that would repeat for ever', { timeout: MATCH_BOUND_MS }, async (t) => {
  const { client } = await serverFor(t);
  // No special cards; seat 0 holds the first nine shapes, seat 1 the other nine: no two
  // visible cards ever match, however the recycled piles are shuffled, so no round ever
  // opens a race. Only a deliberate grab changes it.
  const deal = Array.from({ length: 36 }, (_, i) => [i, i + 36]).flat();
  const created = await client.createMatch({
    maxPlayers: 2,
    turnTimeoutMs: 50,
    specials: NO_SPECIALS,
    prearrangedDeal: deal,
  });
  const bots = [];
  for (const name of ['alice', 'bob']) {
    const session = await client.join(created.match_id, { name });
    bots.push(new JungleSpeedBot(session, { reactionMs: [1, 5], revealDelayMs: [1, 3] }));
  }
  const states = await bounded(Promise.all(bots.map((bot) => bot.run())), MATCH_BOUND_MS);
  assert.ok(states.every((s) => s.summary.status === 'MATCH_STATUS_ENDED'));
  assert.ok(bots.reduce((sum, bot) => sum + bot.stats.stallBreaks, 0) >= 1);
  const kinds = (await collect(client, created.match_id)).map(kind);
  const firstBreak = kinds.indexOf('wrong_grab');
  assert.ok(firstBreak > 0, 'a deliberate wrong grab');
  assert.ok(kinds.slice(0, firstBreak).filter((k) => k === 'piles_recycled').length >= 2);
  assert.ok(!kinds.slice(0, firstBreak).includes('duel_won'));
});

/**
 * Every event of a match, as a spectator, until the server ends the stream.
 * @param {import('../index.js').Client} client
 * @param {string} matchId
 */
async function collect(client, matchId) {
  const events = [];
  for await (const event of client.watch(matchId)) events.push(event);
  return events;
}
