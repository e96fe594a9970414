// What every game's bot shares (lib/table.js): what becomes of a command it sends.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TotemError } from '../lib/errors.js';
import { MAX_TRANSIENT_FAILURES, TableBot } from '../lib/table.js';

/** A seated session that is never used: `send` only runs the command it is given. */
const SESSION = /** @type {import('../lib/session.js').Session} */ (
  /** @type {unknown} */ ({ seat: 1, name: 'bot' })
);

/** @param {string} code */
const failing = (code) => () => Promise.reject(new TotemError(code, `failed: ${code}`));

test('a bot needs a seat', () => {
  const spectator = /** @type {import('../lib/session.js').Session} */ (
    /** @type {unknown} */ ({ seat: null, name: 'watcher' })
  );
  assert.throws(() => new TableBot(spectator), TypeError);
});

test('an accepted command resets the count of transient failures', async () => {
  const bot = new TableBot(SESSION);
  bot.transient = 3;
  assert.equal(await bot.send(() => Promise.resolve(), assert.fail), 'accepted');
  assert.equal(bot.transient, 0);
  assert.equal(bot.failure, null);
});

test("a command the rules refuse is handed to the bot's refusal, and the bot plays on", async () => {
  const bot = new TableBot(SESSION);
  /** @type {TotemError[]} */
  const refused = [];
  const sent = await bot.send(failing('FAILED_PRECONDITION'), (error) => refused.push(error));
  assert.equal(sent, 'refused');
  assert.deepEqual(
    refused.map((e) => e.code),
    ['FAILED_PRECONDITION'],
  );
  assert.equal(bot.failure, null);
});

test('a server restarting is waited for many times in a row, then stops the bot', async () => {
  const bot = new TableBot(SESSION);
  // The server's hint (no wait) is what the bot waits: the test does not take minutes.
  const restarting = () =>
    Promise.reject(new TotemError('UNAVAILABLE', 'restarting', { retryDelayMs: 0 }));
  assert.ok(MAX_TRANSIENT_FAILURES >= 100, 'about two minutes of the server away');
  for (let i = 1; i <= MAX_TRANSIENT_FAILURES; i += 1) {
    assert.equal(await bot.send(restarting, assert.fail), 'transient');
    assert.equal(bot.failure, null);
  }
  assert.equal(await bot.send(failing('UNAVAILABLE'), assert.fail), 'stopped');
  assert.equal(/** @type {TotemError} */ (bot.failure).code, 'UNAVAILABLE');
});

test('any other failure stops the bot, and run() will throw it', async () => {
  const bot = new TableBot(SESSION);
  let closed = false;
  bot.stream = /** @type {import('../lib/streams.js').EventStream} */ (
    /** @type {unknown} */ ({ close: () => (closed = true) })
  );
  assert.equal(await bot.send(failing('PERMISSION_DENIED'), assert.fail), 'stopped');
  assert.equal(/** @type {TotemError} */ (bot.failure).code, 'PERMISSION_DENIED');
  assert.ok(closed, 'the watch stream is closed, so that run() ends');
});

test('a bot of no game has no next action to take', () => {
  const bot = new TableBot(SESSION);
  const state = /** @type {import('../lib/messages.js').MatchState} */ (
    /** @type {unknown} */ ({ summary: { status: 'MATCH_STATUS_PLAYING' } })
  );
  assert.throws(() => bot.nextAction(state), TypeError);
});
