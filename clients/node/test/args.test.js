// A bearer token may start with '-' (base64url): `--token -x...` is still read as the
// token's value, as `--token=-x...` is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseArgs } from 'node:util';

import { joinValues } from '../lib/args.js';

const OPTIONS = /** @type {const} */ ({
  token: { type: 'string', multiple: true },
  join: { type: 'string' },
  extended: { type: 'boolean' },
});

test('a value starting with a dash is the value of its string option', () => {
  const args = ['--join', 'm-1', '--token', '-6keE', '--token', 'abc', '--extended'];
  assert.throws(() => parseArgs({ args, options: OPTIONS }));
  const { values } = parseArgs({ args: joinValues(args, ['token', 'join']), options: OPTIONS });
  assert.deepEqual(values.token, ['-6keE', 'abc']);
  assert.equal(values.join, 'm-1');
  assert.equal(values.extended, true);
});

test('a flag and a value already joined are left as they are', () => {
  const args = ['--token=-x', '--extended'];
  assert.deepEqual(joinValues(args, ['token']), args);
});
