// The calls of the client against a real server, and how refusals are decoded.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TotemError, commands } from '../index.js';
import { NO_SPECIALS, serverFor } from './support.js';

test('a match is created, joined, viewed, played and listed', async (t) => {
  const { client } = await serverFor(t);
  await client.waitReady();
  // No special cards: the first reveal is one event and opens nothing, whatever the deal
  // (outward arrows on top would reveal for both seats, inward arrows open a race).
  const created = await client.createMatch({
    variant: 'RU',
    maxPlayers: 2,
    turnTimeoutMs: 0,
    specials: NO_SPECIALS,
  });
  assert.match(created.match_id, /^[0-9a-f-]{36}$/);
  assert.ok(created.referee_token.length > 0);
  assert.equal(created.seed_commitment.length, 32);

  const alice = await client.join(created.match_id, { name: 'alice', entropy: 'dice' });
  assert.equal(alice.seat, 0);
  assert.equal(alice.role, 'VIEWER_ROLE_PLAYER');
  const bob = await client.join(created.match_id, { name: 'bob', seat: 1 });
  assert.equal(bob.seat, 1);

  const view = await alice.get();
  assert.equal(view.summary.status, 'MATCH_STATUS_PLAYING');
  assert.equal(view.summary.variant, 'RU');
  assert.equal(view.seat, 0);
  assert.equal(view.jungle_speed.turn, 0);
  assert.equal(view.jungle_speed.legal.reveal, true);
  assert.deepEqual(view.jungle_speed.legal.grabs, []);
  const spectator = await client.spectate(created.match_id).get();
  assert.equal(spectator.role, 'VIEWER_ROLE_SPECTATOR');
  assert.equal(spectator._seat, undefined, 'no seat');
  assert.equal(spectator.jungle_speed.legal, null);

  const answer = await alice.reveal();
  assert.equal(answer.version, view.summary.version + 1);
  assert.equal(answer.events[0].jungle_speed.revealed.seat, 0);
  assert.equal(answer.state.jungle_speed.turn, 1);
  assert.equal(alice.seenVersion, answer.version);
  assert.equal(alice.state?.summary.version, answer.version);
  // A grab with nothing open is accepted, and is a wrong grab (JS-5.2).
  const grab = await bob.grab();
  assert.equal(grab.events[0].jungle_speed.event, 'wrong_grab');

  const page = await client.listMatches({ pageSize: 1, status: 'MATCH_STATUS_PLAYING' });
  assert.deepEqual(
    page.matches.map((/** @type {any} */ m) => m.match_id),
    [created.match_id],
  );
  const waiting = await client.listMatches({ status: 'MATCH_STATUS_WAITING' });
  assert.deepEqual(waiting.matches, []);
  assert.equal(waiting.next_page_token, '');
});

test('a referee reissues a lost token; the old one stops working', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({ maxPlayers: 3 });
  const alice = await client.join(created.match_id, { name: 'alice' });
  const fresh = await client.reissueToken(created.match_id, 0, {
    refereeToken: created.referee_token,
  });
  assert.notEqual(fresh.player_token, alice.token);
  await assert.rejects(alice.start(), {
    code: 'UNAUTHENTICATED',
  });
  const again = client.session(created.match_id, { token: fresh.player_token, seat: 0 });
  await client.join(created.match_id, { name: 'bob' });
  const started = await again.start();
  assert.equal(started.state.summary.status, 'MATCH_STATUS_PLAYING');
  await assert.rejects(
    client.reissueToken(created.match_id, 0, { refereeToken: fresh.player_token }),
    TotemError,
  );
});

test('a refusal decodes into code, rule, sentence and ErrorInfo', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({ maxPlayers: 2, turnTimeoutMs: 0 });
  await client.join(created.match_id, { name: 'alice' });
  const bob = await client.join(created.match_id, { name: 'bob' });

  const error = await bob.reveal().then(
    () => assert.fail('a reveal out of turn was accepted'),
    (/** @type {unknown} */ e) => e,
  );
  assert.ok(error instanceof TotemError);
  assert.ok(error instanceof Error);
  assert.equal(error.code, 'FAILED_PRECONDITION');
  assert.equal(error.status, 9);
  assert.equal(error.rule, 'JS-3.1');
  assert.ok(error.isRuleRefusal);
  assert.doesNotMatch(error.message, /^JS-3\.1/);
  assert.match(error.message, /turn/);
  assert.deepEqual(error.errorInfo, {
    reason: 'JS-3.1',
    domain: 'totem.v1',
    metadata: { rule: 'JS-3.1' },
  });
  assert.match(String(error), /^TotemError: FAILED_PRECONDITION: JS-3\.1: /);
});

test('joining with neither seat nor any_seat is INVALID_ARGUMENT', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({ maxPlayers: 2 });
  await assert.rejects(client.unary('JoinMatch', { match_id: created.match_id, name: 'x' }), {
    name: 'TotemError',
    code: 'INVALID_ARGUMENT',
    rule: '',
    errorInfo: { reason: 'INVALID_ARGUMENT', domain: 'totem.v1', metadata: { rule: '' } },
  });
});

test('other refusals keep their status', async (t) => {
  const { client } = await serverFor(t);
  const created = await client.createMatch({ maxPlayers: 2 });
  await assert.rejects(client.getMatch('not-a-match'), { code: 'INVALID_ARGUMENT' });
  await assert.rejects(client.getMatch('00000000-0000-4000-8000-000000000000'), {
    code: 'NOT_FOUND',
  });
  await assert.rejects(client.act(created.match_id, commands.reveal(), { token: '' }), {
    code: 'UNAUTHENTICATED',
  });
  await assert.rejects(client.createMatch({ maxPlayers: 11 }), { code: 'INVALID_ARGUMENT' });
  await assert.rejects(
    client.createMatch({ variant: /** @type {any} */ ('XX') }),
    TypeError,
  );
  assert.throws(() => commands.grab(/** @type {any} */ ('sideways')), TypeError);
  const alice = await client.join(created.match_id, { name: 'alice' });
  await assert.rejects(alice.act(commands.reveal(), { seenVersion: 99 }), {
    code: 'INVALID_ARGUMENT',
  });
});
