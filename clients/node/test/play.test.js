// Play: commands over one open stream, answered as Act answers them, in order.
import assert from 'node:assert/strict';
import { createConnection, createServer } from 'node:net';
import { test } from 'node:test';

import { PlayStream, TotemError, commands, connect } from '../index.js';
import { bounded, kind, recordCalls, serverFor } from './support.js';

/**
 * The first eight cards of every match here, four per seat: symbols of eight shapes (a
 * symbol's id is 4 * shape + colour), so that the first reveals open no duel and turn no
 * arrow (JS-4.1, JS-6).
 */
const PLAIN_TOPS = [0, 1, 2, 3, 4, 5, 6, 7].map((shape) => 4 * shape);
const DEAL = [...PLAIN_TOPS, ...Array.from({ length: 80 }, (_, i) => i)].filter(
  (card, i, all) => all.indexOf(card) === i,
);

/**
 * A started two-seat Jungle Speed match with no turn timer, whose first eight reveals
 * are plain.
 * @param {import('../index.js').Client} client
 */
async function seated(client) {
  const created = await client.createMatch({
    maxPlayers: 2,
    turnTimeoutMs: 0,
    prearrangedDeal: DEAL,
  });
  const alice = await client.join(created.match_id, { name: 'alice' });
  const bob = await client.join(created.match_id, { name: 'bob' });
  return { matchId: created.match_id, alice, bob };
}

/**
 * @param {import('../index.js').Client} client
 * @param {string} matchId
 * @returns {Promise<number>}
 */
async function versionOf(client, matchId) {
  return (await client.getMatch(matchId)).summary.version;
}

/**
 * The rejection of `promise`, which must reject.
 * @param {Promise<unknown>} promise
 * @returns {Promise<TotemError>}
 */
async function refusal(promise) {
  const error = await bounded(
    promise.then(
      () => assert.fail('accepted'),
      (/** @type {unknown} */ e) => e,
    ),
  );
  assert.ok(error instanceof TotemError, String(error));
  return error;
}

/** @param {TotemError} error */
const fields = (error) => {
  const { code, status, rule, message, errorInfo, retryDelayMs } = error;
  return { code, status, rule, message, errorInfo, retryDelayMs };
};

/**
 * A TCP relay to the server that can hold back what the server sends and cut every
 * connection: a broken network, which ends a stream whose requests the server has read
 * and answered.
 * @param {number} port the server's
 */
async function relayTo(port) {
  /** @type {import('node:net').Socket[]} */
  const sockets = [];
  let holding = false;
  /** @type {Buffer[]} */
  const held = [];
  const relay = createServer((client) => {
    const server = createConnection({ host: '127.0.0.1', port });
    sockets.push(client, server);
    client.on('data', (data) => server.write(data));
    server.on('data', (data) => (holding ? held.push(data) : client.write(data)));
    for (const socket of [client, server]) socket.on('error', () => {});
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  relay.listen(0, '127.0.0.1');
  await new Promise((resolve) => relay.once('listening', resolve));
  const address = /** @type {import('node:net').AddressInfo} */ (relay.address());
  return {
    address: `127.0.0.1:${address.port}`,
    hold() {
      holding = true;
    },
    cut() {
      for (const socket of sockets.splice(0)) socket.resetAndDestroy();
      holding = false;
    },
    close() {
      this.cut();
      relay.close();
    },
  };
}

test('JS-3.1 commands on Play streams are applied and answered in order', async (t) => {
  /** @type {string[]} */
  const calls = [];
  const { client } = await serverFor(t, {
    clientOptions: { channelOptions: { interceptors: [recordCalls(calls)] } },
  });
  const { matchId, alice, bob } = await seated(client);
  const first = await versionOf(client, matchId);
  calls.length = 0;
  alice.openPlay();
  bob.openPlay();
  assert.ok(alice.onStream && alice.play instanceof PlayStream);
  const answers = [];
  for (let turn = 0; turn < 6; turn += 1) {
    const player = turn % 2 === 0 ? alice : bob;
    const answer = await bounded(player.reveal());
    answers.push(answer);
    assert.equal(player.seenVersion, answer.version);
  }
  const [aliceStream, bobStream] = [alice.play, bob.play];
  await bounded(Promise.all([alice.closePlay(), bob.closePlay()]));
  // One Play call per session carried every command: not one Act.
  assert.deepEqual(calls, Array(2).fill('/totem.v1.MatchService/Play'));
  assert.equal(alice.onStream, false);
  assert.equal(await aliceStream?.ended(), null, 'closed cleanly');
  assert.equal(await bobStream?.ended(), null, 'closed cleanly');

  assert.deepEqual(
    answers.map((a) => a.version),
    [1, 2, 3, 4, 5, 6].map((n) => first + n),
  );
  assert.deepEqual(
    answers.map((a) => kind(a.events[0])),
    Array(6).fill('revealed'),
  );
  assert.deepEqual(
    answers.map((a) => a.events[0].jungle_speed.revealed.seat),
    [0, 1, 0, 1, 0, 1],
  );
  assert.deepEqual(
    answers.map((a) => a.events[0].jungle_speed.revealed.card.id),
    PLAIN_TOPS.slice(0, 6),
  );
  assert.deepEqual(
    answers.map((a) => a.state.jungle_speed.turn),
    [1, 0, 1, 0, 1, 0],
  );
  // Back on Act calls, the session still plays.
  assert.equal((await alice.reveal()).version, first + 7);
});

test('JS-3.1 a refusal on the stream is the TotemError Act rejects with; the stream goes on', async (t) => {
  const { client } = await serverFor(t);
  const { matchId, alice, bob } = await seated(client);
  const before = await versionOf(client, matchId);
  const options = { token: bob.token, seenVersion: before };
  const byAct = await refusal(client.act(matchId, commands.reveal(), options));
  const stream = client.play({ token: bob.token });
  t.after(() => stream.cancel());
  const onStream = await refusal(stream.act(matchId, commands.reveal(), { seenVersion: before }));
  assert.equal(await versionOf(client, matchId), before, 'a refusal writes nothing');
  await alice.reveal();
  const answer = await bounded(
    stream.act(matchId, commands.reveal(), { seenVersion: before + 1, seat: 1 }),
  );
  assert.equal(stream.done, false);
  assert.equal(await bounded(stream.close()), null);

  assert.deepEqual(fields(onStream), fields(byAct));
  assert.equal(onStream.code, 'FAILED_PRECONDITION');
  assert.equal(onStream.rule, 'JS-3.1');
  assert.ok(onStream.isRuleRefusal);
  assert.deepEqual(onStream.errorInfo, {
    reason: 'JS-3.1',
    domain: 'totem.v1',
    metadata: { rule: 'JS-3.1' },
  });
  assert.equal(onStream.retryDelayMs, null);
  assert.equal(answer.version, before + 2);
  assert.equal(answer.events[0].jungle_speed.revealed.seat, 1);
});

test('JS-5.2 concurrent acts on one stream each get their own answer', async (t) => {
  const { client } = await serverFor(t);
  const { matchId, alice } = await seated(client);
  for (let i = 0; i < 12; i += 1) await alice.grab(); // versions to tell requests apart by
  const version = await versionOf(client, matchId);
  const bad = version + 1000;
  const plan = Array.from({ length: version }, (_, i) => version - i); // distinct, decreasing
  plan.splice(2, 0, bad);
  const stream = client.play({ token: alice.token });
  t.after(() => stream.cancel());
  const results = await bounded(
    Promise.allSettled(
      plan.map((seenVersion) => stream.act(matchId, commands.grab(), { seenVersion })),
    ),
  );

  const refused = results[plan.indexOf(bad)];
  assert.equal(refused.status, 'rejected');
  assert.equal(refused.status === 'rejected' && refused.reason.code, 'INVALID_ARGUMENT');
  const applied = results.filter((_, i) => plan[i] !== bad);
  const seens = plan.filter((s) => s !== bad);
  const versions = [];
  for (const [i, result] of applied.entries()) {
    assert.equal(result.status, 'fulfilled', String(result.status === 'rejected' && result.reason));
    if (result.status !== 'fulfilled') continue;
    assert.equal(kind(result.value.events[0]), 'wrong_grab');
    assert.equal(result.value.events[0].jungle_speed.wrong_grab.stamp.seen_version, seens[i]);
    versions.push(result.value.version);
  }
  assert.deepEqual(
    versions,
    seens.map((_, i) => version + 1 + i),
  );
});

test('a broken stream reaches every act waiting on it', async (t) => {
  const { server, client } = await serverFor(t);
  const { matchId, alice } = await seated(client);
  const before = await versionOf(client, matchId);
  const relay = await relayTo(server.port);
  t.after(() => relay.close());
  const far = connect(relay.address);
  t.after(() => far.close());
  const session = far.session(matchId, { token: alice.token, seat: 0 });
  const stream = session.openPlay();
  await bounded(session.grab()); // the stream is up
  relay.hold();
  const acts = [0, 1, 2].map(() => stream.act(matchId, commands.grab(), { seenVersion: 1 }));
  const settled = Promise.allSettled(acts);
  // Read and applied by the server, not answered.
  while ((await versionOf(client, matchId)) < before + 4) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  relay.cut();
  const results = await bounded(settled);
  const later = await refusal(stream.act(matchId, commands.grab()));
  const next = await bounded(session.grab()); // a new stream
  await session.closePlay();

  assert.deepEqual(
    results.map((r) => r.status === 'rejected' && r.reason.code),
    ['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'],
  );
  assert.equal(stream.failure?.code, 'UNAVAILABLE');
  assert.equal(later.code, 'UNAVAILABLE');
  assert.equal(kind(next.events[0]), 'wrong_grab');
  assert.equal(next.version, before + 5);
});

test('a server shutting down ends the stream with UNAVAILABLE and a retry delay', async (t) => {
  const { server, client } = await serverFor(t);
  const { matchId, alice } = await seated(client);
  const stream = client.play({ token: alice.token });
  t.after(() => stream.cancel());
  await bounded(stream.act(matchId, commands.reveal()));
  await server.stop();
  const failure = await bounded(stream.ended());
  const later = await refusal(stream.act(matchId, commands.grab()));

  assert.ok(failure instanceof TotemError);
  assert.equal(failure.code, 'UNAVAILABLE');
  assert.ok((failure.retryDelayMs ?? 0) > 0, `retry delay ${failure.retryDelayMs}`);
  assert.deepEqual(fields(later), fields(failure));
});

test('without a token the stream ends UNAUTHENTICATED, as Act is refused', async (t) => {
  const { client } = await serverFor(t);
  const { matchId } = await seated(client);
  const byAct = await refusal(client.act(matchId, commands.reveal(), { token: '' }));
  const stream = client.play({ token: '' });
  const onStream = await refusal(stream.act(matchId, commands.reveal()));
  assert.equal(onStream.code, 'UNAUTHENTICATED');
  assert.equal(onStream.message, byAct.message);
  assert.equal(stream.done, true);
  assert.equal(stream.failure?.code, 'UNAUTHENTICATED');
});

test('JS-5.1 a stream opens with a ready request: answered first, no command', async (t) => {
  const { client } = await serverFor(t);
  const { matchId, alice } = await seated(client);
  const before = await versionOf(client, matchId);
  const stream = client.play({ token: alice.token });
  await bounded(stream.opened());
  assert.equal(await versionOf(client, matchId), before, 'the ready request wrote nothing');
  const answer = await bounded(stream.act(matchId, commands.reveal()));
  assert.equal(answer.version, before + 1);
  assert.equal(answer.events[0].jungle_speed.revealed.stamp.on_stream, true);
  assert.equal(await bounded(stream.close()), null);

  const refused = client.play({ token: '' });
  const error = await refusal(refused.opened());
  assert.equal(error.code, 'UNAUTHENTICATED');
});
