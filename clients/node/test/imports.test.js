// The client's modules import one another without a cycle, as the Python packages do
// (tests/test_layers.py): read from the source, every static `import ... from` and
// `export ... from` of a module of this package (JSDoc `import()` types, erased when the
// code runs, are not imports).
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The package's modules (the test files aside), by their path from its root. */
const MODULES = [
  ...readdirSync(ROOT).filter((name) => name.endsWith('.js')),
  ...['lib', 'lib/games'].flatMap((dir) =>
    readdirSync(path.join(ROOT, dir))
      .filter((name) => name.endsWith('.js'))
      .map((name) => `${dir}/${name}`),
  ),
].sort();

/** `import ... from './x.js'` and `export ... from './x.js'`; `import './x.js'`. */
const FROM = /^\s*(?:import|export)\s[^;]*?\bfrom\s*'(\.{1,2}\/[^']+)'/gm;
const BARE = /^\s*import\s*'(\.{1,2}\/[^']+)'/gm;

/**
 * The modules of this package `module` imports when it runs.
 * @param {string} module
 * @returns {string[]}
 */
function importsOf(module) {
  const code = readFileSync(path.join(ROOT, module), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  return [...code.matchAll(FROM), ...code.matchAll(BARE)].map((match) =>
    path.posix.join(path.posix.dirname(module), match[1]),
  );
}

/** @type {Map<string, string[]>} */
const GRAPH = new Map(MODULES.map((module) => [module, importsOf(module)]));

test('every relative import names a module of the package', () => {
  for (const [module, targets] of GRAPH) {
    for (const target of targets) assert.ok(GRAPH.has(target), `${module} imports ${target}`);
  }
  // The reading finds what is there.
  assert.ok(GRAPH.get('lib/client.js')?.includes('lib/session.js'));
  assert.ok(GRAPH.get('index.js')?.includes('lib/streams.js'));
  assert.ok(GRAPH.get('lib/games.js')?.includes('lib/games/tribes.js'));
});

test('no module is part of an import cycle', () => {
  /** @type {Map<string, 'open' | 'done'>} */
  const seen = new Map();
  /** @type {string[][]} */
  const cycles = [];
  /** @param {string[]} trail */
  const visit = (trail) => {
    const module = trail[trail.length - 1];
    seen.set(module, 'open');
    for (const target of GRAPH.get(module) ?? []) {
      if (seen.get(target) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(target)), target]);
      } else if (!seen.has(target)) {
        visit([...trail, target]);
      }
    }
    seen.set(module, 'done');
  };
  for (const module of MODULES) if (!seen.has(module)) visit([module]);
  assert.deepEqual(cycles.map((cycle) => cycle.join(' -> ')), []);
});
