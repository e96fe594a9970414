// Watch resumes by itself from the last version it received: no gap, no duplicate.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { connect } from '../index.js';
import { ORGANISER_TOKEN, Server, bounded, collectUntil, kind, serverFor } from './support.js';

/** @param {Record<string, any>[]} events */
const versions = (events) => events.map((e) => e.version);
/** @param {number} last */
const upTo = (last) => Array.from({ length: last }, (_, i) => i + 1);

test('watch resumes after the server restarts on the same store', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'totem-node-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'restart.db');
  let server = await Server.start(db);
  t.after(() => server.stop());
  const client = connect(server.address, { organiserToken: ORGANISER_TOKEN });
  t.after(() => client.close());

  // Nobody plays: the turn timer reveals for the players, so events keep coming.
  const created = await client.createMatch({ maxPlayers: 2, turnTimeoutMs: 50 });
  const alice = await client.join(created.match_id, { name: 'alice' });
  await client.join(created.match_id, { name: 'bob' });
  const stream = alice.watch();
  const events = stream[Symbol.asyncIterator]();
  const seen = await bounded(collectUntil(events, 8));

  await server.stop();
  server = await Server.start(db, server.port);
  // Events the second server records, after all the first one did.
  const target = (await client.getMatch(created.match_id)).summary.version + 10;
  seen.push(...(await bounded(collectUntil(events, target))));
  stream.close();
  assert.equal((await events.next()).done, true, 'a closed stream ends');

  assert.ok(stream.resumes >= 1, `resumed ${stream.resumes} times`);
  const last = seen.at(-1)?.version ?? 0;
  assert.ok(last >= target);
  assert.deepEqual(versions(seen), upTo(last));
  assert.equal(stream.lastVersion, last);
  assert.equal(alice.seenVersion, last);
  // The same events, states included, as a fresh reading of the store.
  const again = client.watch(created.match_id, { token: alice.token });
  const fresh = await bounded(collectUntil(again[Symbol.asyncIterator](), last));
  again.close();
  assert.deepEqual(fresh, seen);
  const timerEvents = ['revealed', 'outward_reveal', 'piles_recycled'];
  assert.ok(seen.slice(4).every((e) => timerEvents.includes(kind(e))));
});

test('watch resumes from a version of its own choosing', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({ maxPlayers: 2, turnTimeoutMs: 0 });
  await client.join(created.match_id, { name: 'alice' });
  const stop = new AbortController();
  const stream = client.watch(created.match_id, { afterVersion: 1, signal: stop.signal });
  const events = stream[Symbol.asyncIterator]();
  const [event] = await bounded(collectUntil(events, 2));
  stop.abort();
  assert.equal((await bounded(events.next())).done, true, 'an aborted stream ends');
  assert.equal(event.version, 2);
  assert.equal(kind(event), 'player_joined');
  assert.equal(event.state.summary.version, 2);
  assert.equal(event.state.jungle_speed.legal, null, 'a spectator has no legal actions');
});

test('watch gives up after maxFailures failures in a row', async () => {
  const port = await freePort();
  const client = connect(`127.0.0.1:${port}`);
  try {
    const stream = client.watch('00000000-0000-4000-8000-000000000000', { maxFailures: 2 });
    await assert.rejects(bounded(stream[Symbol.asyncIterator]().next()), {
      name: 'TotemError',
      code: 'UNAVAILABLE',
    });
    assert.equal(stream.resumes, 2);
  } finally {
    client.close();
  }
});

test('watch does not retry a refusal', async (t) => {
  const { client } = await serverFor(t);
  const stream = client.watch('00000000-0000-4000-8000-000000000000');
  await assert.rejects(bounded(stream[Symbol.asyncIterator]().next()), { code: 'NOT_FOUND' });
  assert.equal(stream.resumes, 0);
});

test('an after_version beyond the match is OUT_OF_RANGE', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({ maxPlayers: 2 });
  const stream = client.watch(created.match_id, { afterVersion: 99 });
  await assert.rejects(bounded(stream[Symbol.asyncIterator]().next()), { code: 'OUT_OF_RANGE' });
});

/** A port nothing listens on. @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
