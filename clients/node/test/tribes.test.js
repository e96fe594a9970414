// Tribes through the Node client: creating with options, the commands, refusals with
// their TR rule ids, the referee's penalty, hidden stacks, and a table of bots playing a
// whole match from their streams alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  TotemError,
  TribesBot,
  chooseMove,
  connect,
  playTribesTable,
  tribesCommands,
} from '../index.js';
import { BOUND_MS, bounded, recordCalls, serverFor, ORGANISER_TOKEN } from './support.js';

/** Short, so that a bot that stops playing is replaced by the timer and no test hangs. */
const TURN_TIMEOUT_MS = 500;
/** A whole match is longer than one wait; still a bound, not a timing assertion. */
const MATCH_BOUND_MS = 180_000;
/** Cards of Truth giving every round of a two-seat match the turn order 0, 1. */
const IN_ORDER = [[1, 2]];

/**
 * What a player may see of a referee's Tribes state: the referee alone sees whole stacks
 * and the prearranged draws; a player alone has legal actions.
 * @param {Record<string, any>} state a TribesState
 */
function seen(state) {
  const { legal: _legal, ...rest } = state;
  return {
    ...rest,
    options: { ...rest.options, prearranged_cards: [], prearranged_dice: [] },
    spaces: rest.spaces.map((/** @type {any} */ space) => ({ ...space, stack: [] })),
  };
}

/**
 * The name of a Tribes event, or of a common one.
 * @param {Record<string, any>} event
 */
function kind(event) {
  return event.event === 'tribes' ? event.tribes.event : event.event;
}

/**
 * A two-seat Tribes match without a turn timer, seat 0 first every round; its referee,
 * alice (seat 0) and bob (seat 1).
 * @param {import('../index.js').Client} client
 * @param {Record<string, any>} [options]
 */
async function tribesMatch(client, options = {}) {
  const created = await client.createMatch({
    game: 'tribes',
    maxPlayers: 2,
    turnTimeoutMs: 0,
    prearrangedCards: IN_ORDER,
    ...options,
  });
  const alice = await client.join(created.match_id, { name: 'alice' });
  const bob = await client.join(created.match_id, { name: 'bob' });
  return { created, referee: client.referee(created), alice, bob };
}

/**
 * The error a promise rejects with.
 * @param {Promise<unknown>} promise
 * @returns {Promise<TotemError>}
 */
async function refusal(promise) {
  const error = await promise.then(
    () => assert.fail('the command was accepted'),
    (/** @type {unknown} */ e) => e,
  );
  assert.ok(error instanceof TotemError, String(error));
  return error;
}

test('createMatch creates a match of any game with its options', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({
    game: 'tribes',
    maxPlayers: 3,
    boardSize: 5,
    turnTimeoutMs: 0,
    roundMoveLimit: 50,
    extended: true,
    diceFaces: ['blank', 'large', 'small'],
    salvationSpaces: [0, 24],
    prearrangedCards: [[3, 1, 2]],
    prearrangedDice: ['large', 'TRIBES_DIE_FACE_BLANK'],
    entropy: 'dice',
  });
  const view = await client.getMatch(created.match_id);
  assert.equal(view.summary.game, 'GAME_TRIBES');
  assert.equal(view.state, 'tribes');
  const options = view.tribes.options;
  assert.equal(options.max_players, 3);
  assert.equal(options.board_size, 5);
  assert.equal(options.round_move_limit, 50);
  assert.equal(options.extended, true);
  assert.deepEqual(options.dice_faces, [
    'TRIBES_DIE_FACE_BLANK',
    'TRIBES_DIE_FACE_LARGE',
    'TRIBES_DIE_FACE_SMALL',
  ]);
  assert.deepEqual(options.salvation_spaces, { spaces: [0, 24] });
  // A spectator sees only that draws were prearranged; the referee sees them.
  assert.equal(options.prearranged, true);
  assert.deepEqual(options.prearranged_cards, []);
  const referee = await client.referee(created).get();
  assert.deepEqual(referee.tribes.options.prearranged_cards, [{ cards: [3, 1, 2] }]);
  assert.deepEqual(referee.tribes.options.prearranged_dice, [
    'TRIBES_DIE_FACE_LARGE',
    'TRIBES_DIE_FACE_BLANK',
  ]);

  // The Jungle Speed call is unchanged, and is the default game.
  const jungle = await client.createMatch({ variant: 'RU', maxPlayers: 2 });
  const jungleView = await client.getMatch(jungle.match_id);
  assert.equal(jungleView.summary.game, 'GAME_JUNGLE_SPEED');
  assert.equal(jungleView.summary.variant, 'RU');
  const filtered = await client.listMatches({ game: 'tribes' });
  assert.deepEqual(
    filtered.matches.map((/** @type {any} */ m) => m.match_id),
    [created.match_id],
  );

  // Options out of range are the server's refusal, with the rule; another game's options,
  // an unknown game or an unknown name are the library's.
  await assert.rejects(client.createMatch({ game: 'tribes', maxPlayers: 5 }), {
    code: 'INVALID_ARGUMENT',
    rule: 'TR-1.1',
  });
  await assert.rejects(client.createMatch({ game: 'tribes', variant: 'RU' }), TypeError);
  await assert.rejects(client.createMatch({ boardSize: 3 }), TypeError);
  await assert.rejects(client.createMatch({ game: 'chess' }), TypeError);
  await assert.rejects(client.createMatch({ game: 'tribes', diceFaces: ['six'] }), TypeError);
});

test('Tribes: place from the mat, lift then place, a badge named by the win', async (t) => {
  const { client } = await serverFor(t);
  const { alice, bob } = await tribesMatch(client);
  const view = await alice.get();
  assert.equal(alice.game, 'tribes');
  assert.equal(view.tribes.board_size, 3);
  assert.equal(view.tribes.turn, 0);
  const legal = view.tribes.legal;
  assert.deepEqual(legal.lifts, []);
  assert.deepEqual(
    legal.places.map((/** @type {any} */ p) => [p.source, p.totem.size, p.destinations.length]),
    [1, 2, 3, 4, 5].map((size) => ['TRIBES_PLACE_SOURCE_MAT', size, 9]),
  );
  assert.deepEqual(legal.badges, [
    'TRIBES_BADGE_WISDOM',
    'TRIBES_BADGE_LOYALTY',
    'TRIBES_BADGE_BOLDNESS',
    'TRIBES_BADGE_TENACITY',
  ]);

  let answer = await alice.place(0, { size: 1 });
  assert.equal(answer.events[0].tribes.placed.destination, 0);
  assert.deepEqual(answer.state.tribes.spaces[0].top, {
    kind: 'TRIBES_TOTEM_KIND_TRIBE',
    seat: 0,
    size: 1,
  });
  assert.deepEqual(answer.state.tribes.seats[0].mat, [2, 3, 4, 5]);
  await bob.place(3, { size: 1 });

  // A move from the board: lift, then place the lifted totem.
  answer = await alice.lift(0);
  assert.equal(answer.events[0].tribes.event, 'lifted');
  const lifted = answer.state.tribes.lifted;
  assert.deepEqual([lifted.totem.size, lifted.origin], [1, 0]);
  const [option] = answer.state.tribes.legal.places;
  assert.equal(option.source, 'TRIBES_PLACE_SOURCE_LIFTED');
  assert.ok(!option.destinations.includes(0), 'never back where it was lifted from');
  const back = await refusal(alice.place(0));
  assert.deepEqual([back.code, back.rule], ['FAILED_PRECONDITION', 'TR-2.2a']);
  answer = await alice.placeOption(option, 1);
  assert.equal(answer.events[0].tribes.placed.origin, 0);

  await bob.place(4, { size: 2 });
  await alice.place(0, { size: 2 });
  await bob.place(8, { size: 3 });
  // 0, 1, 2: alice's line, and the badge she names.
  answer = await alice.place(2, { size: 3, badge: 'tenacity' });
  const won = answer.events.find((/** @type {any} */ e) => e.tribes?.event === 'round_won');
  assert.ok(won, 'the round is won');
  assert.equal(won.tribes.round_won.winner, 0);
  assert.equal(won.tribes.round_won.kind, 'TRIBES_WIN_KIND_LINE');
  assert.equal(won.tribes.round_won.badge, 'TRIBES_BADGE_TENACITY');
  assert.deepEqual(won.tribes.round_won.lines, [{ spaces: [0, 1, 2] }]);
  assert.deepEqual(answer.state.tribes.seats[0].badges, ['TRIBES_BADGE_TENACITY']);
  assert.equal(answer.state.tribes.round, 2);
  // A badge she holds cannot be named again.
  const held = await refusal(alice.place(0, { size: 1, badge: 'TRIBES_BADGE_TENACITY' }));
  assert.deepEqual([held.code, held.rule], ['INVALID_ARGUMENT', 'TR-3.4']);
});

test('a refused Tribes move decodes with its TR rule id', async (t) => {
  const { client } = await serverFor(t);
  const { created, alice, bob } = await tribesMatch(client);

  const error = await refusal(bob.place(4, { size: 1 })); // alice's turn
  assert.equal(error.code, 'FAILED_PRECONDITION');
  assert.equal(error.status, 9);
  assert.equal(error.rule, 'TR-2.2');
  assert.ok(error.isRuleRefusal);
  assert.doesNotMatch(error.message, /^TR-/);
  assert.deepEqual(error.errorInfo, {
    reason: 'TR-2.2',
    domain: 'totem.v1',
    metadata: { rule: 'TR-2.2' },
  });
  assert.match(String(error), /^TotemError: FAILED_PRECONDITION: TR-2\.2: /);

  const offBoard = await refusal(alice.place(9, { size: 1 }));
  assert.deepEqual([offBoard.code, offBoard.rule], ['INVALID_ARGUMENT', 'TR-1.2']);
  const special = await refusal(alice.place(4, { special: 'doom' })); // the base game
  assert.deepEqual([special.code, special.rule], ['INVALID_ARGUMENT', 'TR-5.1']);
  const empty = await refusal(alice.lift(4));
  assert.deepEqual([empty.code, empty.rule], ['FAILED_PRECONDITION', 'TR-2.2']);
  // Nothing changed: the refused commands wrote nothing.
  assert.equal((await alice.get()).tribes.moves, 0);

  // The library's own checks: a bare Tribes command must name its game.
  assert.throws(
    () => client.act(created.match_id, { lift: { space: 0 } }, { token: alice.token }),
    TypeError,
  );
  assert.throws(() => tribesCommands.place(1, { size: 1, special: 'mini' }), TypeError);
  assert.throws(() => tribesCommands.place(1, { badge: 'courage' }), TypeError);
  assert.throws(() => tribesCommands.lift(-1), TypeError);
  const bare = await client.act(created.match_id, { place: { destination: 4, size: 1 } }, {
    token: alice.token,
    game: 'tribes',
  });
  assert.equal(bare.events[0].tribes.placed.destination, 4);
});

test("the referee's penalty goes through Act with no seat; a player's is refused", async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({
    game: 'tribes',
    maxPlayers: 2,
    turnTimeoutMs: 0,
    prearrangedCards: IN_ORDER,
  });
  const referee = client.referee(created);
  assert.equal(referee.seat, null);
  const alice = await client.join(created.match_id, { name: 'alice' });
  const early = await refusal(referee.penalise(0)); // before the start
  assert.deepEqual([early.code, early.rule], ['FAILED_PRECONDITION', 'TR-4.1']);
  const bob = await client.join(created.match_id, { name: 'bob' });

  const denied = await refusal(alice.penalise(1));
  assert.equal(denied.code, 'PERMISSION_DENIED');
  const asSeat = await refusal(
    client.act(created.match_id, tribesCommands.penalise(1), {
      token: created.referee_token,
      seat: 0,
    }),
  );
  assert.equal(asSeat.code, 'INVALID_ARGUMENT', 'a referee command acts for no seat');

  const answer = await referee.penalise(1);
  assert.deepEqual(answer.events.map(kind), ['penalised']);
  assert.equal(answer.events[0].tribes.penalised.seat, 1);
  assert.equal(answer.events[0].tribes.penalised.from_round, 2);
  assert.equal(answer.state.tribes.seats[1].penalised, true);
  assert.equal(answer.state.tribes.seats[1].chief_removed, false, 'from the next round on');
  const again = await refusal(referee.penalise(1));
  assert.deepEqual([again.code, again.rule], ['FAILED_PRECONDITION', 'TR-4.1']);
  // Every viewer sees the penalty.
  const view = await bob.get();
  assert.equal(view.tribes.seats[1].penalised, true);
});

test('players and spectators see only the tops; the referee sees whole stacks', async (t) => {
  const { client } = await serverFor(t);
  const { created, referee, alice, bob } = await tribesMatch(client);
  await alice.place(4, { size: 1 });
  await bob.place(4, { size: 2 }); // covers alice's totem
  const top = { kind: 'TRIBES_TOTEM_KIND_TRIBE', seat: 1, size: 2 };
  for (const session of [alice, bob, client.spectate(created.match_id)]) {
    const space = (await session.get()).tribes.spaces[4];
    assert.deepEqual(space.top, top);
    assert.deepEqual(space.stack, [], `${session.name} sees no stack`);
  }
  const whole = (await referee.get()).tribes.spaces[4];
  assert.deepEqual(whole.top, top);
  assert.deepEqual(whole.stack, [{ kind: 'TRIBES_TOTEM_KIND_TRIBE', seat: 0, size: 1 }, top]);
});

test('2 Tribes bots play a whole match to the Feathers from the stream alone', {
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
    playTribesTable(botClient, 2, {
      turnTimeoutMs: TURN_TIMEOUT_MS,
      thinkMs: [0, 2],
      seed: 11,
      onSeated: (matchId) => spectators.push(collect(client, matchId)),
    }),
    MATCH_BOUND_MS,
  );
  const events = await bounded(spectators[0]);

  // After the joins, the bots only watched and played on Play streams (JS-5.1): no
  // GetMatch, no Act, ever.
  const methods = calls.map((p) => p.split('/').pop());
  assert.deepEqual(methods.slice(0, 3), ['CreateMatch', 'JoinMatch', 'JoinMatch']);
  assert.deepEqual(new Set(methods.slice(3)), new Set(['Watch', 'Play']));

  const referee = await client.getMatch(result.matchId, { token: result.created.referee_token });
  assert.equal(referee.role, 'VIEWER_ROLE_REFEREE');
  assert.equal(referee.summary.status, 'MATCH_STATUS_ENDED');
  assert.equal(referee.summary.end_reason, 'END_REASON_COMPLETED');
  // Each bot's last state, from its own stream, is the referee's on every field a
  // player may see, and hides what lies under the tops.
  for (const [seat, state] of result.states.entries()) {
    assert.equal(state.game, 'tribes');
    assert.deepEqual(state.summary, referee.summary, `seat ${seat}'s summary`);
    assert.deepEqual(seen(state.tribes), seen(referee.tribes), `seat ${seat}`);
    assert.ok(state.tribes.spaces.every((/** @type {any} */ s) => s.stack.length === 0));
    const legal = state.tribes.legal;
    assert.ok(legal, 'a player has legal actions');
    assert.deepEqual([legal.start, legal.lifts, legal.places], [false, [], []]);
  }
  assert.ok(referee.tribes.seed.length > 0, 'the seed is public at the end');

  // The spectator's stream ended by itself with the match: every event once, in order.
  assert.deepEqual(
    events.map((e) => e.version),
    Array.from({ length: referee.summary.version }, (_, i) => i + 1),
  );
  assert.equal(kind(events.at(-1) ?? {}), 'match_ended');
  // The champion took four badges, then the Feathers with a fifth round.
  const won = events.filter((e) => kind(e) === 'round_won').map((e) => e.tribes.round_won);
  const last = won.at(-1);
  assert.ok(last?.feathers, 'the last round won takes the Feathers');
  const champion = last.winner;
  assert.ok(won.filter((w) => w.winner === champion).length >= 5);
  const first = referee.summary.result.filter((/** @type {any} */ r) => r.place === 1);
  assert.deepEqual(
    first.map((/** @type {any} */ r) => r.seat),
    [champion],
  );
  assert.deepEqual(
    result.bots.filter((bot) => bot.stats.feathers).map((bot) => bot.seat),
    [champion],
  );
  assert.equal(
    result.bots.reduce((sum, bot) => sum + bot.stats.roundsWon, 0),
    won.length,
  );
  // The bots played (not only the turn timer for them), and never sent a refused
  // command again before the match changed.
  const moves = events.filter((e) => kind(e) === 'placed');
  const byBots = moves.filter((e) => e.tribes.placed.cause === 'TRIBES_MOVE_CAUSE_PLAYER');
  assert.equal(result.bots.reduce((sum, bot) => sum + bot.stats.moves, 0), byBots.length);
  assert.ok(result.bots.every((bot) => bot.stats.moves > 0));
  const lifts = events.filter(
    (e) => kind(e) === 'lifted' && e.tribes.lifted.cause === 'TRIBES_MOVE_CAUSE_PLAYER',
  );
  assert.equal(result.bots.reduce((sum, bot) => sum + bot.stats.lifts, 0), lifts.length);
  for (const bot of result.bots) {
    const refusals = bot.stats.refusals.map((r) => JSON.stringify(r));
    assert.equal(new Set(refusals).size, refusals.length);
  }
});

test('a Tribes bot needs a seat, and takes a win it can see', async (t) => {
  const { client } = await serverFor(t);
  const { created, alice, bob } = await tribesMatch(client);
  assert.throws(() => new TribesBot(client.spectate(created.match_id)), TypeError);
  assert.throws(() => new TribesBot(alice, { thinkMs: [5, 1] }), RangeError);
  await alice.place(0, { size: 1 });
  await bob.place(3, { size: 1 });
  await alice.place(1, { size: 2 });
  await bob.place(4, { size: 2 });
  const state = /** @type {Record<string, any>} */ ((await alice.get()).tribes);
  // Whatever the random draw, the one winning place is chosen: a totem on space 2.
  for (const draw of [0, 0.5, 0.999]) {
    const move = chooseMove(state, 0, () => draw);
    assert.ok(move?.kind === 'place' && move.wins && move.destination === 2, JSON.stringify(move));
  }
  // Not bob's turn: no move.
  assert.equal(chooseMove((await bob.get()).tribes, 1), null);
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
