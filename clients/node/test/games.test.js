// The Node client's table of games lists the games of the contract's Game enum, as the
// Python registries do (tests/contract/test_game_registries.py): no game half-registered.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import protobuf from 'protobufjs';

import { GAMES } from '../index.js';
import { PROTOS_DIR } from '../lib/proto.js';

test('every game of the contract is in GAMES, with its enum and its field', () => {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.resolve(PROTOS_DIR, target);
  root.loadSync(['totem/v1/common.proto'], { keepCase: true });
  const enums = Object.keys(root.lookupEnum('totem.v1.Game').values).filter(
    (name) => name !== 'GAME_UNSPECIFIED',
  );
  assert.ok(enums.length >= 3);
  assert.deepEqual(Object.values(GAMES).map((g) => g.enum).sort(), [...enums].sort());
  for (const game of Object.values(GAMES)) {
    assert.equal(`GAME_${game.name.toUpperCase()}`, game.enum);
    assert.equal(game.field, game.name);
  }
});

// The modules every game goes through name none: a game lives in lib/games/<game>.js and
// is registered once, in lib/games.js (comments may name one as an example).
const GENERIC = ['calls.js', 'client.js', 'session.js', 'streams.js', 'messages.js', 'proto.js'];

test('generic modules name no game outside their comments', async () => {
  const { readFile } = await import('node:fs/promises');
  const { fileURLToPath } = await import('node:url');
  const lib = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib');
  const names = Object.values(GAMES).flatMap((g) => [g.name, g.title]);
  for (const file of GENERIC) {
    const source = await readFile(path.join(lib, file), 'utf8');
    const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    for (const name of names) {
      assert.ok(!code.includes(name), `${file} names ${name}`);
    }
  }
});
