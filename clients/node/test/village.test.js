// Village through the Node client: creating with options, a refusal with its VI rule id,
// and a table of bots playing a whole match from their streams alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TotemError, connect, playVillageTable, seeded, villageCommands } from '../index.js';
import { bounded, recordCalls, serverFor, ORGANISER_TOKEN } from './support.js';

/** Short deadlines, so that a bot that stops answering is replaced by the timers. */
const DEADLINES = Object.freeze({
  arrangeTimeoutMs: 1000,
  chooseTimeoutMs: 1000,
  placeTimeoutMs: 1000,
  revealTimeoutMs: 1000,
  victimsTimeoutMs: 1000,
  youthTimeoutMs: 1000,
});
/** A whole match is longer than one wait; still a bound, not a timing assertion. */
const MATCH_BOUND_MS = 180_000;

/**
 * What a player may see of a referee's (or a player's) Village state: without the legal
 * actions, the referee's secrets and each family's owner-only fields.
 * @param {Record<string, any>} state a VillageState
 */
function seen(state) {
  const { legal: _legal, secret: _secret, ...rest } = state;
  return {
    ...rest,
    options: { ...rest.options, prearranged_sexes: [] },
    families: rest.families.map((/** @type {any} */ f) => ({
      ...f,
      owned: false,
      spells: [],
      hand: [],
      placements: [],
    })),
    board: rest.board.map((/** @type {any} */ spot) =>
      spot.revealed ? spot : { ...spot, spell: 'VILLAGE_SPELL_UNSPECIFIED', salt: Buffer.alloc(0) },
    ),
    named: rest.named.map((/** @type {any} */ n) => ({ ...n, victims: [] })),
  };
}

test('a Village command for a family the seat does not play is refused as for another seat', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({ game: 'GAME_VILLAGE', maxPlayers: 2, ...DEADLINES });
  const alice = await client.join(created.match_id, { name: 'alice' });
  await client.join(created.match_id, { name: 'bob' });
  const view = await alice.get();
  assert.equal(view.village.options.arrange_timeout_ms, 1000);
  const owed = view.village.legal.decisions;
  assert.ok(owed.length > 0 || view.village.decision, 'the match waits for a decision');
  // Family 1 is bob's (VI-7.1): alice may not arrange it, as for another seat (VI-7.9).
  const members = view.village.families[1].unhoused;
  const error = await alice
    .village(villageCommands.arrange(1, [members, {}, {}]))
    .then(
      () => assert.fail('the command was accepted'),
      (/** @type {unknown} */ e) => e,
    );
  assert.ok(error instanceof TotemError, String(error));
  assert.equal(error.code, 'PERMISSION_DENIED');
  assert.equal(error.rule, 'VI-2.2');
  assert.ok(!error.isRuleRefusal);
  assert.deepEqual(error.errorInfo, {
    reason: error.rule,
    domain: 'totem.v1',
    metadata: { rule: error.rule },
  });
});

test('two Village bots play a whole match from their streams alone', async (t) => {
  const { server, client } = await serverFor(t);
  /** @type {string[]} */
  const calls = [];
  const botClient = connect(server.address, {
    organiserToken: ORGANISER_TOKEN,
    channelOptions: { interceptors: [recordCalls(calls)] },
  });
  t.after(() => botClient.close());
  const result = await bounded(
    playVillageTable(botClient, 2, { matchOptions: DEADLINES }),
    MATCH_BOUND_MS,
  );

  // After the joins, the bots only watched and played on Play streams (JS-5.1): no
  // GetMatch, no Act, ever.
  const methods = calls.map((p) => p.split('/').pop());
  assert.deepEqual(methods.slice(0, 3), ['CreateMatch', 'JoinMatch', 'JoinMatch']);
  assert.deepEqual(new Set(methods.slice(3)), new Set(['Watch', 'Play']));

  const referee = await client.getMatch(result.matchId, { token: result.created.referee_token });
  assert.equal(referee.role, 'VIEWER_ROLE_REFEREE');
  assert.equal(referee.summary.status, 'MATCH_STATUS_ENDED');
  for (const [seat, state] of result.states.entries()) {
    assert.equal(state.game, 'village');
    assert.deepEqual(state.summary, referee.summary, `seat ${seat}'s summary`);
    assert.deepEqual(seen(state.village), seen(referee.village), `seat ${seat}`);
    assert.ok(result.bots[seat].stats.sent > 0, `seat ${seat} answered decisions`);
    assert.deepEqual(result.bots[seat].stats.refusals, [], `seat ${seat}'s commands were legal`);
  }
  assert.ok(referee.village.families.some((/** @type {any} */ f) => f.pole === 6));
  assert.ok(referee.village.seed.length > 0, 'the seed is public at the end');
});

test('Village bots play a match to its end by their strategy, not the defaults', async (t) => {
  const { client } = await serverFor(t);
  const result = await bounded(
    playVillageTable(client, 3, {
      matchOptions: { ...DEADLINES, spellsA: true, feastA: true },
      random: seeded(25),
    }),
    MATCH_BOUND_MS,
  );
  const referee = await client.getMatch(result.matchId, { token: result.created.referee_token });
  assert.equal(referee.summary.status, 'MATCH_STATUS_ENDED');
  assert.ok(referee.village.families.some((/** @type {any} */ f) => f.pole === 6));
  for (const [seat, bot] of result.bots.entries()) {
    // Every accepted command is counted; those other than the decision's default are
    // the strategy's own (cottages, spells, placements, victims, the spared).
    assert.deepEqual(bot.stats.refusals, [], `seat ${seat}'s commands were legal`);
    assert.ok(bot.stats.decided > 0, `seat ${seat} made decisions of its own`);
    assert.ok(bot.stats.decided <= bot.stats.sent);
  }
  const decided = result.bots.reduce((n, bot) => n + bot.stats.decided, 0);
  const sent = result.bots.reduce((n, bot) => n + bot.stats.sent, 0);
  t.diagnostic(`${decided} of ${sent} accepted commands were not the default`);
});
