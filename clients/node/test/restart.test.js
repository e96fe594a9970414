// A table of Node bots rides out a crash of the server: `totem serve` is killed under it
// (SIGKILL) and started again on the same store and port, and the match goes on to its
// end. Nothing is timed: the test waits for what happens (every bot has tried the absent
// server again and again); its bounds only keep a broken test from hanging.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';

import { JungleSpeedBot } from '../bot.js';
import { connect } from '../index.js';
import { newestSummary } from '../lib/table.js';
import { BOUND_MS, ORGANISER_TOKEN, Server, bounded } from './support.js';

/** The version after which the server is killed: well under way, far from the end. */
const KILL_AFTER_VERSION = 12;
/** More attempts than a watch stream gives up after by default (maxFailures 10). */
const ATTEMPTS_WHILE_AWAY = 12;
/** The turn timer, far longer than a bot takes to reveal (0 to 5 ms). */
const SAFETY_NET_MS = 2000;
/** A whole match, restart included: a bound against hanging, not a timing assertion. */
const MATCH_BOUND_MS = 300_000;

/**
 * Wait until `condition()` holds: it counts what the bots' streams did, which no event
 * announces, so it is looked at every few milliseconds.
 * @param {() => boolean} condition
 */
async function until(condition) {
  const giveUp = performance.now() + BOUND_MS;
  while (!condition()) {
    if (performance.now() > giveUp) throw new Error('never came true');
    await sleep(10);
  }
}

test('a table of bots finishes its match across a crash of the server', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'totem-node-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'crash.db');
  let server = await Server.start(db);
  t.after(() => server.stop());
  const client = connect(server.address, { organiserToken: ORGANISER_TOKEN });
  t.after(() => client.close());

  // The bots reveal within milliseconds; the turn timer (JS-3.4) is only a safety net
  // (without one, a match can reach a state where every card is face up and no seat may
  // act, restart or not), and the reveals it makes are counted apart (`timedOut`).
  const created = await client.createMatch({ maxPlayers: 2, turnTimeoutMs: SAFETY_NET_MS });
  const sessions = [
    await client.join(created.match_id, { name: 'bot-0' }),
    await client.join(created.match_id, { name: 'bot-1' }),
  ];
  const bots = sessions.map(
    (session) => new JungleSpeedBot(session, { reactionMs: [0, 5], revealDelayMs: [0, 5] }),
  );
  let finished = false;
  const table = Promise.all(bots.map((bot) => bot.run())).finally(() => (finished = true));
  table.catch(() => {}); // awaited below; a failure meanwhile is not unhandled

  const watching = client.watch(created.match_id, { omitState: true });
  for await (const event of watching) if (event.version >= KILL_AFTER_VERSION) break;
  watching.close();
  server.child.kill('SIGKILL');
  await server.exited;

  await until(
    () => finished || bots.every((bot) => (bot.stream?.resumes ?? 0) > ATTEMPTS_WHILE_AWAY),
  );
  assert.equal(finished, false, 'the table waited for the server');
  const before = bots.map((bot) => bot.stats.reveals);
  assert.ok(
    before.every((n) => n > 0),
    `both seats played before the crash: ${before}`,
  );
  server = await Server.start(db, server.port);

  const states = await bounded(table, MATCH_BOUND_MS);
  const summary = newestSummary(states);
  assert.equal(summary.status, 'MATCH_STATUS_ENDED');
  assert.equal(summary.end_reason, 'END_REASON_COMPLETED');
  // Each bot played on after the restart: it made more reveals of its own (those of the
  // timer are counted apart).
  const after = bots.map((bot) => bot.stats.reveals);
  const timedOut = bots.map((bot) => bot.stats.timedOut);
  assert.ok(
    after.every((n, i) => n > before[i]),
    `reveals before ${before}, after ${after} (by the timer: ${timedOut})`,
  );
});
