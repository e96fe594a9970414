// Routing a match's players to one instance: the same choice as the Python client's.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { instanceFor, instancesFor } from '../index.js';

const ADDRESSES = ['10.0.0.1:50051', '10.0.0.2:50051', '10.0.0.3:50051'];

test('the choices are those of the Python client (tests/client/test_routing.py)', () => {
  assert.deepEqual(instancesFor('00000000-0000-0000-0000-000000000001', ADDRESSES), [
    '10.0.0.1:50051',
    '10.0.0.3:50051',
    '10.0.0.2:50051',
  ]);
  assert.deepEqual(instancesFor('5f1d2c3b-0000-4000-8000-00000000abcd', ADDRESSES), [
    '10.0.0.3:50051',
    '10.0.0.1:50051',
    '10.0.0.2:50051',
  ]);
});

test('the order of the list does not matter', () => {
  for (let i = 0; i < 200; i++) {
    const id = `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`;
    assert.equal(instanceFor(id, ADDRESSES), instanceFor(id, [...ADDRESSES].reverse()));
  }
});

test('no instance is an error', () => {
  assert.throws(() => instanceFor('x', []), /no server instance/);
});
