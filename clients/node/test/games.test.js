// The Node client's table of games lists the games of the contract's Game enum, as the
// Python registries do (tests/contract/test_game_registries.py): no game half-registered.
// Each game is one module of lib/games/, registered once in lib/games.js, and the generic
// modules name no game (as tests/client/test_game_table.py holds the Python client's).
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import protobuf from 'protobufjs';

import { GAMES, Session } from '../index.js';
import { withGameVerbs } from '../lib/games.js';
import { PROTOS_DIR } from '../lib/proto.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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

/** The game modules of lib/games/ (shared.js, what they share, aside), by file name. */
const GAME_FILES = readdirSync(path.join(ROOT, 'lib/games'))
  .filter((name) => name.endsWith('.js') && name !== 'shared.js')
  .sort();

/**
 * A game module's session verbs: the class its `<game>Verbs` mixin adds over `Base`.
 * @param {Record<string, any>} module
 * @param {new (...args: any[]) => any} Base
 * @returns {any}
 */
function verbsOf(module, Base) {
  const mixins = Object.keys(module).filter((name) => name.endsWith('Verbs'));
  assert.equal(mixins.length, 1, `${module.GAME?.name}: one mixin of session verbs`);
  return module[mixins[0]](Base);
}

test('each game is one module of lib/games/, its entry the one in the table', async () => {
  assert.deepEqual(GAME_FILES, Object.keys(GAMES).map((name) => `${name}.js`).sort());
  for (const file of GAME_FILES) {
    const module = await import(`../lib/games/${file}`);
    assert.equal(GAMES[module.GAME.name], module.GAME, file);
    assert.equal(typeof module.GAME.options, 'function', file);
  }
});

test("every Session has each game's verbs; no verb hides another or the session's", async () => {
  class Bare {
    /** @param {any} command */
    async act(command) {
      return command;
    }
  }
  // The session's own methods: the class at the bottom of Session's chain.
  let own = Session.prototype;
  while (Object.getPrototypeOf(own) !== Object.prototype) own = Object.getPrototypeOf(own);
  const sessions = new Set(Object.getOwnPropertyNames(own));
  assert.ok(sessions.has('act') && sessions.has('watch'));
  /** @type {Map<string, string>} */
  const owners = new Map();
  for (const file of GAME_FILES) {
    const module = await import(`../lib/games/${file}`);
    const verbs = Object.getOwnPropertyNames(verbsOf(module, Bare).prototype).filter(
      (name) => name !== 'constructor',
    );
    assert.ok(verbs.length > 0, file);
    for (const verb of verbs) {
      assert.equal(typeof (/** @type {any} */ (Session.prototype)[verb]), 'function', verb);
      assert.ok(!sessions.has(verb), `${verb} of ${file} hides the session's`);
      assert.ok(!owners.has(verb), `${verb} of ${file} and of ${owners.get(verb)}`);
      owners.set(verb, file);
    }
  }
  for (const verb of ['reveal', 'grab', 'lift', 'place', 'placeOption', 'penalise', 'village']) {
    assert.ok(owners.has(verb), verb);
  }
  // A verb sends its game's command through the session's act.
  const session = new (withGameVerbs(Bare))();
  assert.deepEqual(await session.lift(3), { tribes: { lift: { space: 3 } } });
  assert.deepEqual(await session.reveal(), { reveal: {} });
  assert.deepEqual(await session.village({ start: {} }), { village: { start: {} } });
});

/**
 * A module's code without its comments (strings kept as they are).
 * @param {string} source
 * @returns {string}
 */
function code(source) {
  const string = /'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/.source;
  const comment = /\/\*[\s\S]*?\*\/|\/\/[^\n]*/.source;
  return source.replace(new RegExp(`(${string})|${comment}`, 'g'), (_match, kept) => kept ?? '');
}

/** A game's name in any spelling: 'tribes', 'Tribes', 'GAME_TRIBES', 'JungleSpeed'... */
const GAME_WORD = new RegExp(
  [...new Set(Object.values(GAMES).flatMap((g) => [g.name, g.field, g.title]))]
    .map((word) => word.replace(/[^A-Za-z0-9]/g, '[ _]?'))
    .join('|'),
  'i',
);

/**
 * The modules every game goes through: index.js, every module of lib/ but the table
 * (lib/games.js), and what the game modules share.
 */
const GENERIC = [
  'index.js',
  'lib/games/shared.js',
  ...readdirSync(path.join(ROOT, 'lib'))
    .filter((name) => name.endsWith('.js') && name !== 'games.js')
    .map((name) => `lib/${name}`),
];

test('generic modules name no game outside comments and index.js re-exports', () => {
  // The reading finds a game where there is one, in any spelling, and not in a comment.
  assert.match(code("export const GAME = { name: 'tribes' };"), GAME_WORD);
  for (const word of ['jungleSpeed', 'JungleSpeedBot', 'GAME_JUNGLE_SPEED', 'Jungle Speed']) {
    assert.match(word, GAME_WORD);
  }
  assert.doesNotMatch(code('// a Village\n/* Jungle Speed */ const x = 1;'), GAME_WORD);
  assert.ok(GENERIC.includes('lib/client.js') && GENERIC.includes('lib/table.js'));
  /** @type {Record<string, string[]>} */
  const found = {};
  for (const module of GENERIC) {
    let text = code(readFileSync(path.join(ROOT, module), 'utf8'));
    // index.js re-exports each game's builders and bots, for compatibility.
    if (module === 'index.js') text = text.replace(/^export\s*\{[^}]*\}\s*from\s*'[^']+';/gm, '');
    const words = text.match(new RegExp(GAME_WORD.source, 'gi'));
    if (words) found[module] = words;
  }
  assert.deepEqual(found, {});
});
