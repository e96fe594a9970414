// Tournaments through the Node client: the requests it builds, and a Swiss tournament of
// four entrants played to its end by Node bots against a real `totem serve`, with a
// dispute filed and ruled, the standings and the signed result sheet read back, and
// refusals decoded with their TO rule ids.
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import {
  TotemError,
  TournamentClient,
  connectTournaments,
  playTournament,
  resultSheetMessage,
  verdicts,
} from '../index.js';
import { createRequest } from '../lib/tournament.js';
import { ORGANISER_TOKEN, Server, bounded, collectUntil, serverFor } from './support.js';

/** A whole tournament is longer than one wait; still a bound, not a timing assertion. */
const TOURNAMENT_BOUND_MS = 240_000;
/** Short, so that a bot that stops playing is replaced by the timer and no test hangs. */
const TURN_TIMEOUT_MS = 500;
const ENTRANTS = ['ada', 'bo', 'cy', 'di'];

/**
 * An exact number as the standings write it ("3", "1.5", "7/3"), as [numerator,
 * denominator] in lowest terms.
 * @param {string} text
 * @returns {[number, number]}
 */
function fraction(text) {
  let num;
  let den;
  if (text.includes('/')) {
    [num, den] = text.split('/').map(Number);
  } else {
    const [whole, decimals = ''] = text.split('.');
    den = 10 ** decimals.length;
    num = Number(whole + decimals);
  }
  return reduce(num, den);
}

/**
 * @param {number} num
 * @param {number} den
 * @returns {[number, number]}
 */
function reduce(num, den) {
  /** @type {(a: number, b: number) => number} */
  const gcd = (a, b) => (b === 0 ? Math.abs(a) : gcd(b, a % b));
  const g = gcd(num, den) || 1;
  return [num / g, den / g];
}

/**
 * @param {[number, number][]} values
 * @returns {[number, number]}
 */
function sum(values) {
  return values.reduce(([a, b], [c, d]) => reduce(a * d + c * b, b * d), [0, 1]);
}

/** A promise and what settles it. */
function deferred() {
  /** @type {(value?: unknown) => void} */
  let resolve = () => {};
  const promise = new Promise((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * Read a stream's events until one satisfies `wanted`; every event read is kept in `seen`.
 * @param {AsyncIterator<Record<string, any>>} events
 * @param {Record<string, any>[]} seen
 * @param {(event: Record<string, any>) => boolean} wanted
 */
async function readUntil(events, seen, wanted) {
  for (;;) {
    const next = await bounded(events.next());
    if (next.done) throw new Error('the stream ended first');
    seen.push(next.value);
    if (wanted(next.value)) return next.value;
  }
}

test('tournament requests: options by short name, the game’s options, and TypeErrors', async () => {
  const request = createRequest({
    game: 'tribes',
    format: 'swiss',
    tableSize: 2,
    rounds: 2,
    tieBreaks: ['sonneborn_berger', 'TIE_BREAK_BUCHHOLZ'],
    options: { turnTimeoutMs: 500 },
    disputeWindowMs: 50,
  });
  assert.equal(request.game, 'GAME_TRIBES');
  assert.equal(request.format, 'TOURNAMENT_FORMAT_SWISS');
  assert.deepEqual(request.tie_breaks, ['TIE_BREAK_SONNEBORN_BERGER', 'TIE_BREAK_BUCHHOLZ']);
  assert.equal(request.tribes.turn_timeout_ms, 500);
  assert.equal(request.dispute_window_ms, 50);
  assert.equal('no_show_ms' in request, false, 'unset: the server’s default');
  assert.equal(
    createRequest({ game: 'tribes', format: 'swiss', tableSize: 2, disputeWindowMs: 0 })
      .dispute_window_ms,
    0,
    '0 is no window, not the default',
  );
  assert.equal(request.jungle_speed, undefined);

  const js = createRequest({ game: 'GAME_JUNGLE_SPEED', format: 'round_robin', tableSize: 3 });
  assert.equal(js.jungle_speed, undefined, 'no options: the game’s defaults');
  assert.equal(js.format, 'TOURNAMENT_FORMAT_ROUND_ROBIN');

  assert.throws(() => createRequest({ game: 'chess', format: 'swiss', tableSize: 2 }), TypeError);
  assert.throws(() => createRequest({ game: 'tribes', format: 'ladder', tableSize: 2 }), TypeError);
  assert.throws(
    () => createRequest({ game: 'tribes', format: 'swiss', tableSize: 2, tieBreaks: ['coin'] }),
    TypeError,
  );
  assert.throws(
    () => createRequest({ game: 'tribes', format: 'swiss', tableSize: 2, options: { variant: 'ES' } }),
    TypeError,
    'an option of another game',
  );
  assert.throws(
    // @ts-expect-error: not an option
    () => createRequest({ game: 'tribes', format: 'swiss', tableSize: 2, seats: 2 }),
    TypeError,
  );

  assert.deepEqual(verdicts.stands(), { stands: {} });
  assert.deepEqual(verdicts.penalise('bo', 0.5), { penalise: { entrant: 'bo', points: '0.5' } });
  assert.deepEqual(verdicts.replace({ ada: 2, bo: 1 }, ['ada']), {
    replace: {
      places: [
        { entrant: 'ada', place: 2 },
        { entrant: 'bo', place: 1 },
      ],
      forfeited: ['ada'],
    },
  });
  assert.deepEqual(verdicts.replay(7), { replay: { version: 7 } });
  // Nothing is sent: the client is never connected.
  const client = new TournamentClient('127.0.0.1:1');
  try {
    await assert.rejects(
      client.rule('t', 1, { lenient: {} }, { reason: 'r', token: 'x' }),
      TypeError,
    );
    await assert.rejects(
      // @ts-expect-error: no format
      client.createTournament({ game: 'tribes', tableSize: 2 }),
      TypeError,
    );
  } finally {
    client.close();
  }
});

test(
  'a Swiss tournament played by Node bots: a dispute ruled, standings, the signed sheet, TO refusals',
  { timeout: TOURNAMENT_BOUND_MS },
  async (t) => {
    const { server, client } = await serverFor(t);
    const organiser = connectTournaments(server.address, { organiserToken: ORGANISER_TOKEN });
    t.after(() => organiser.close());
    const anyone = connectTournaments(server.address);
    t.after(() => anyone.close());

    // Only an organiser creates a tournament.
    const options = {
      game: 'tribes',
      title: 'Node cup',
      format: 'swiss',
      tableSize: 2,
      rounds: 2,
      options: { turnTimeoutMs: TURN_TIMEOUT_MS },
      // No dispute window: the next round may start as soon as a round has ended (the
      // dispute below is filed while its round is under way), and the tournament ends by
      // itself as soon as its last round has.
      disputeWindowMs: 0,
    };
    await assert.rejects(anyone.createTournament(options), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'PERMISSION_DENIED');
      return true;
    });
    const created = await organiser.createTournament(options);
    const id = created.tournament_id;
    assert.equal(created.seed_commitment.length, 32);

    /** @type {Record<string, string>} */
    const tokens = {};
    for (const [i, name] of ENTRANTS.entries()) {
      const added = await organiser.addEntrant(id, name);
      assert.equal(added.seed, i + 1);
      assert.ok(added.entrant_token);
      tokens[name] = added.entrant_token;
    }
    await assert.rejects(organiser.addEntrant(id, 'ADA'), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.rule, 'TO-8.2', 'a name another entrant has, capitals aside');
      return true;
    });
    const referee = await organiser.appointReferee(id, 'rita');
    assert.ok(referee.referee_token);

    // Refusals before the first round, each with its rule where the rules refuse.
    await assert.rejects(anyone.takeSeat(id, 'no-such-token-0123456789abcdef'), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'UNAUTHENTICATED');
      return true;
    });
    await assert.rejects(anyone.takeSeat(id, tokens.ada), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'FAILED_PRECONDITION', 'no round under way');
      assert.match(error.rule, /^TO-/);
      return true;
    });
    await assert.rejects(anyone.getResultSheet(id), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'FAILED_PRECONDITION');
      assert.equal(error.rule, 'TO-11.1');
      assert.equal(error.errorInfo?.metadata?.rule, 'TO-11.1');
      return true;
    });
    await assert.rejects(anyone.startRound(id), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'PERMISSION_DENIED', 'organisers only');
      return true;
    });

    const listed = await anyone.listTournaments({ pageSize: 100 });
    const summary = listed.tournaments.find((s) => s.tournament_id === id);
    assert.ok(summary);
    assert.equal(summary.title, 'Node cup');
    assert.equal(summary.game, 'GAME_TRIBES');
    assert.equal(summary.format, 'TOURNAMENT_FORMAT_SWISS');
    assert.equal(summary.entrants, ENTRANTS.length);

    // Everything the tournament records, from its first event.
    const watcher = anyone.watchTournament(id);
    t.after(() => watcher.close());
    const events = watcher[Symbol.asyncIterator]();
    /** @type {Record<string, any>[]} */
    const seen = [];

    const round1 = await organiser.startRound(id);
    assert.equal(round1.number, 1);
    assert.equal(round1.tables.length, 2);
    assert.equal(round1.byes.length, 0);
    // Swiss round 1, everyone level (TO-3.3): seed 1 meets seed 3, seed 2 meets seed 4.
    assert.deepEqual(
      round1.tables.map((/** @type {any} */ table) => [...table.seats].sort()),
      [
        ['ada', 'cy'],
        ['bo', 'di'],
      ],
    );
    const [table1, table2] = round1.tables;
    await assert.rejects(anyone.takeSeat(id, 'no-such-token-0123456789abcdef'), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'UNAUTHENTICATED', 'a token of no entrant takes no seat');
      return true;
    });

    // Table 2 of round 1 sits down only once a dispute on table 1 is filed and ruled:
    // so the round is still under way while it is.
    const release = deferred();
    /** @type {Map<string, Promise<import('../tournament-bot.js').TournamentPlay>>} */
    const plays = new Map();
    for (const name of ENTRANTS) {
      const play = playTournament({
        address: server.address,
        tournamentId: id,
        entrantToken: tokens[name],
        game: 'tribes',
        // cy's bot is not told its name: it learns it from its first seat.
        name: name === 'cy' ? undefined : name,
        beforeSeat: async ({ round, table }) => {
          if (round === 1 && table?.table === 2) await release.promise;
        },
      });
      play.catch(() => {}); // awaited below; a failure must not go unhandled meanwhile
      plays.set(name, play);
    }

    const result1 = await readUntil(
      events,
      seen,
      (e) => e.name === 'ResultRecorded' && e.fields.round === 1 && e.fields.table === 1,
    );
    assert.equal(result1.fields.match_id, table1.match_id);

    // TO-9.1: the next round may not start while a table of this one has no result.
    await assert.rejects(organiser.startRound(id), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'FAILED_PRECONDITION');
      assert.equal(error.rule, 'TO-9.1');
      assert.equal(error.errorInfo?.metadata?.rule, 'TO-9.1');
      assert.ok(!error.message.startsWith('TO-9.1'), 'the rule id is not left in the message');
      return true;
    });

    // A dispute on table 1: by an entrant who sat there; not by one who did not.
    const [disputer, other] = table1.seats;
    const [outsider] = table2.seats;
    await assert.rejects(
      anyone.fileDispute(id, { matchId: table1.match_id, text: 'not mine', token: tokens[outsider] }),
      (error) => {
        assert.ok(error instanceof TotemError);
        assert.equal(error.rule, 'TO-10.1');
        return true;
      },
    );
    const filed = await anyone.fileDispute(id, {
      matchId: table1.match_id,
      version: 0,
      text: 'the turn timer moved for me',
      token: tokens[disputer],
    });
    assert.equal(filed.dispute, 1);

    // The queue is the referee's (and the organiser's), not an entrant's.
    await assert.rejects(anyone.listDisputes(id, { token: tokens[other] }), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'PERMISSION_DENIED');
      return true;
    });
    const queue = await anyone.listDisputes(id, { token: referee.referee_token });
    assert.equal(queue.length, 1);
    assert.equal(queue[0].number, filed.dispute);
    assert.equal(queue[0].entrant, disputer);
    assert.equal(queue[0].match_id, table1.match_id);
    assert.equal(queue[0].round, 1);
    assert.equal(queue[0].table, 1);
    assert.equal(queue[0].text, 'the turn timer moved for me');
    assert.deepEqual(
      (await organiser.listDisputes(id)).map((d) => d.number),
      [filed.dispute],
    );

    // Only a referee rules (TO-10.2); this one takes half a point off the disputer.
    await assert.rejects(
      anyone.rule(id, filed.dispute, verdicts.stands(), { reason: 'mine', token: tokens[other] }),
      (error) => {
        assert.ok(error instanceof TotemError);
        assert.equal(error.code, 'PERMISSION_DENIED');
        return true;
      },
    );
    const ruled = await anyone.rule(id, filed.dispute, verdicts.penalise(disputer, '1/2'), {
      reason: 'the timer moves for whoever lets it',
      token: referee.referee_token,
    });
    assert.equal(ruled.ruling, 1);
    assert.equal(ruled.replay_match_id, '');
    assert.deepEqual(await anyone.listDisputes(id, { token: referee.referee_token }), []);
    await assert.rejects(
      anyone.rule(id, filed.dispute, verdicts.stands(), {
        reason: 'again',
        token: referee.referee_token,
      }),
      (error) => {
        assert.ok(error instanceof TotemError);
        assert.equal(error.rule, 'TO-10.2', 'each dispute is ruled on once');
        return true;
      },
    );

    release.resolve();
    await readUntil(events, seen, (e) => e.name === 'RoundEnded' && e.fields.round === 1);
    const between = await anyone.getTournament(id);
    assert.equal(between.dispute_window_ms, 0, 'no window: 0 was sent, not left unset');
    assert.equal(between.open_disputes, 0);
    const round2 = await organiser.startRound(id);
    assert.equal(round2.number, 2);
    // The server ends the tournament once round 2 has ended; each entrant's bot plays to
    // that end.
    const results = await bounded(Promise.all(plays.values()), TOURNAMENT_BOUND_MS);
    const final = await readUntil(events, seen, (e) => e.name === 'TournamentEnded');
    assert.equal((await bounded(events.next())).done, true, 'the stream ends after the final event');

    // The stream: every version once, in order, the tournament's story.
    assert.deepEqual(
      seen.map((e) => e.version),
      seen.map((_, i) => i + 1),
    );
    const names = seen.map((e) => e.name);
    assert.equal(names[0], 'Created');
    assert.equal(names.filter((n) => n === 'EntrantAdded').length, ENTRANTS.length);
    assert.equal(names.filter((n) => n === 'RoundStarted').length, 2);
    assert.equal(names.filter((n) => n === 'ResultRecorded').length, 4);
    assert.equal(names.filter((n) => n === 'RoundEnded').length, 2);
    assert.deepEqual(
      names.filter((n) => n === 'DisputeFiled' || n === 'Ruled'),
      ['DisputeFiled', 'Ruled'],
    );
    assert.equal(names.at(-1), 'TournamentEnded');
    for (const event of seen) {
      assert.match(event.digest, /^[0-9a-f]{64}$/);
      assert.equal('token_hash' in event.fields, false, 'token hashes are nobody’s business');
      if (event.name !== 'TournamentEnded') {
        assert.equal('seed' in event.fields, false, 'the seed stays secret until the end');
      }
    }
    assert.ok(final.fields.seed, 'the final event reveals the seed');

    // Each entrant played a table in each round, to its match's end, with the bot.
    const tournament = await anyone.getTournament(id);
    assert.equal(tournament.summary.ended, true);
    assert.equal(tournament.summary.rounds, 2);
    assert.equal(tournament.summary.rounds_started, 2);
    assert.equal(tournament.rounds.length, 2);
    assert.deepEqual(tournament.referees, ['rita']);
    assert.deepEqual(
      tournament.entrants.map((/** @type {any} */ e) => [e.name, e.seed]),
      ENTRANTS.map((name, i) => [name, i + 1]),
    );
    const matches = new Map(
      tournament.rounds.flatMap((/** @type {any} */ round) =>
        round.tables.map((/** @type {any} */ table) => [table.match_id, { round, table }]),
      ),
    );
    for (const [i, play] of results.entries()) {
      assert.equal(play.name, ENTRANTS[i]);
      assert.deepEqual(play.byes, []);
      assert.equal(play.withdrawnFrom, null);
      assert.deepEqual(
        play.tables.map((table) => table.round),
        [1, 2],
      );
      assert.ok(play.ended, 'the bot followed the tournament to its final event');
      for (const table of play.tables) {
        assert.equal(table.state.summary.status, 'MATCH_STATUS_ENDED');
        const recorded = matches.get(table.matchId);
        assert.ok(recorded, 'the bot played its table’s own match');
        assert.equal(recorded.round.number, table.round);
        assert.equal(recorded.table.number, table.table);
        assert.ok(recorded.table.seats.includes(play.name), 'the entrant’s own table');
        const player = table.state.summary.players.find(
          (/** @type {any} */ p) => p.seat === table.seat,
        );
        assert.equal(player?.name, play.name, 'the seat taken in the entrant’s name');
        assert.equal(recorded.table.version, table.state.summary.version);
        assert.equal(recorded.table.places.length, 2);
        assert.deepEqual(recorded.table.forfeited, []);
      }
    }
    // Round 2 was paired after the ruling: nobody meets anyone again (TO-3.4).
    const firstMeetings = new Set(round1.tables.map((/** @type {any} */ table) => [...table.seats].sort().join()));
    for (const table of tournament.rounds[1].tables) {
      assert.equal(firstMeetings.has([...table.seats].sort().join()), false);
    }
    assert.equal(tournament.rulings.length, 1);
    assert.equal(tournament.rulings[0].judge, 'rita');
    assert.equal(tournament.rulings[0].kind, 'penalty');
    assert.equal(tournament.rulings[0].dispute, filed.dispute);
    assert.equal(tournament.open_disputes, 0);

    // The standings: every entrant once, ranked 1 to 4; four tables of two give a point
    // each, less the half point of the penalty.
    const { standings, tie_breaks } = await anyone.getStandings(id);
    assert.deepEqual(tie_breaks, [
      'TIE_BREAK_BUCHHOLZ',
      'TIE_BREAK_SONNEBORN_BERGER',
      'TIE_BREAK_HEAD_TO_HEAD',
    ]);
    assert.deepEqual(
      standings.map((row) => row.rank),
      [1, 2, 3, 4],
    );
    assert.deepEqual(standings.map((row) => row.entrant).sort(), [...ENTRANTS].sort());
    assert.deepEqual(sum(standings.map((row) => fraction(row.points))), [7, 2]);
    for (const row of standings) assert.equal(row.played, 2);
    assert.equal(standings.at(-1)?.separated_by, '');
    assert.deepEqual(
      tournament.standings.map((/** @type {any} */ row) => row.entrant),
      standings.map((row) => row.entrant),
    );
    const afterRound1 = await anyone.getStandings(id, { round: 1 });
    assert.deepEqual(sum(afterRound1.standings.map((row) => fraction(row.points))), [3, 2]);

    // The result sheet: the final event's digest, signed by the server over the
    // tournament's id, the final version and that digest (TO-11.2).
    const sheet = await anyone.getResultSheet(id);
    assert.equal(sheet.digest, final.digest);
    const lines = sheet.sheet.toString('utf8').trim().split('\n');
    assert.ok(lines.length >= seen.length);
    for (const line of lines) JSON.parse(line);
    const serverKey = await new Promise((resolve, reject) =>
      client.stub.GetServerKey({}, (/** @type {any} */ error, /** @type {any} */ answer) =>
        error ? reject(error) : resolve(answer.public_key),
      ),
    );
    assert.deepEqual(sheet.public_key, serverKey, 'the key GetServerKey gives');
    const key = createPublicKey({
      key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), sheet.public_key]),
      format: 'der',
      type: 'spki',
    });
    const message = resultSheetMessage(id, final.version, final.digest);
    assert.ok(verify(null, message, key, sheet.signature));

    // Nothing is recorded after the end.
    await assert.rejects(organiser.endTournament(id), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.code, 'FAILED_PRECONDITION');
      assert.equal(error.rule, 'TO-11.1');
      return true;
    });
    await assert.rejects(organiser.startRound(id), (error) => {
      assert.ok(error instanceof TotemError);
      assert.equal(error.rule, 'TO-11.1');
      return true;
    });

    // Watching from a version resumes there: the events after it, and the end.
    const tail = [];
    for await (const event of anyone.watchTournament(id, { afterVersion: final.version - 2 })) {
      tail.push(event.version);
    }
    assert.deepEqual(tail, [final.version - 1, final.version]);
  },
);

test('WatchTournament resumes after the server restarts on the same store', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'totem-node-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'restart.db');
  let server = await Server.start(db);
  t.after(() => server.stop());
  const organiser = connectTournaments(server.address, { organiserToken: ORGANISER_TOKEN });
  t.after(() => organiser.close());

  const { tournament_id: id } = await organiser.createTournament({
    game: 'jungle_speed',
    format: 'round_robin',
    tableSize: 2,
  });
  await organiser.addEntrant(id, 'ada');
  await organiser.addEntrant(id, 'bo');
  const stream = organiser.watchTournament(id);
  const events = stream[Symbol.asyncIterator]();
  const seen = await bounded(collectUntil(events, 3));

  await server.stop();
  server = await Server.start(db, server.port);
  // Events the second server records, after all the first one did.
  await organiser.addEntrant(id, 'cy');
  await organiser.appointReferee(id, 'rita');
  seen.push(...(await bounded(collectUntil(events, 5))));
  stream.close();
  assert.equal((await events.next()).done, true, 'a closed stream ends');

  assert.ok(stream.resumes >= 1, `resumed ${stream.resumes} times`);
  assert.deepEqual(
    seen.map((e) => e.version),
    [1, 2, 3, 4, 5],
  );
  assert.deepEqual(
    seen.map((e) => e.name),
    ['Created', 'EntrantAdded', 'EntrantAdded', 'EntrantAdded', 'RefereeAppointed'],
  );
  assert.deepEqual(
    seen.slice(1, 4).map((e) => e.fields.entrant ?? e.fields.name),
    ['ada', 'bo', 'cy'],
  );
  // The same events as a fresh reading of the store.
  const again = organiser.watchTournament(id);
  const fresh = await bounded(collectUntil(again[Symbol.asyncIterator](), 5));
  again.close();
  assert.deepEqual(fresh, seen);
});
