// Coming back after a restart (lib/reconnect.js): the channel's backoff and the pauses.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TotemError } from '../lib/errors.js';
import { CHANNEL_OPTIONS, channelOptions, pause } from '../lib/reconnect.js';

test("the channel tries again within a second, unless the caller's options say otherwise", () => {
  assert.equal(CHANNEL_OPTIONS['grpc.max_reconnect_backoff_ms'], 1000);
  assert.deepEqual(channelOptions(), CHANNEL_OPTIONS);
  const given = channelOptions({ 'grpc.max_reconnect_backoff_ms': 5000, 'grpc.x': 1 });
  assert.equal(given['grpc.max_reconnect_backoff_ms'], 5000);
  assert.equal(given['grpc.initial_reconnect_backoff_ms'], 100);
  assert.equal(given['grpc.x'], 1);
});

test('without a hint the pause doubles from 50 ms up to a second', () => {
  const pauses = [1, 2, 3, 4, 5, 6, 7, 30].map((failures) => pause(failures));
  assert.deepEqual(pauses, [50, 100, 200, 400, 800, 1000, 1000, 1000]);
  assert.equal(pause(3, new TotemError('UNAVAILABLE', 'connection refused')), 200);
});

test("the server's retry hint is waited as it is, longer or shorter", () => {
  const hinted = (/** @type {number} */ ms) =>
    new TotemError('RESOURCE_EXHAUSTED', 'spent', { retryDelayMs: ms });
  assert.equal(pause(1, hinted(1500)), 1500);
  assert.equal(pause(9, hinted(200)), 200);
  assert.equal(pause(9, hinted(0)), 0);
});
