// `buf curl` finds the services through server reflection v1, with no .proto files.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';

import { ORGANISER_TOKEN, serverFor } from './support.js';

const BUF = fileURLToPath(new URL('../node_modules/.bin/buf', import.meta.url));

/**
 * Run `buf curl` over plaintext HTTP/2 gRPC, with reflection v1 as the only schema.
 * @param {string} url
 * @param {string[]} args
 */
async function bufCurl(url, ...args) {
  const { stdout } = await promisify(execFile)(
    BUF,
    [
      'curl',
      '--protocol',
      'grpc',
      '--http2-prior-knowledge',
      '--reflect',
      '--reflect-protocol',
      'grpc-v1',
      ...args,
      url,
    ],
    { timeout: 60_000 },
  );
  return stdout;
}

test('buf curl lists the services and creates a match through reflection v1', async (t) => {
  const { server, client } = await serverFor(t);
  const base = `http://${server.address}`;

  const services = (await bufCurl(base, '--list-services')).trim().split('\n');
  assert.ok(services.includes('totem.v1.MatchService'), services.join(', '));
  assert.ok(services.includes('grpc.health.v1.Health'), services.join(', '));
  // Every service listed can be described through v1, reflection's own included.
  const methods = (await bufCurl(base, '--list-methods')).trim().split('\n');
  assert.ok(methods.includes('totem.v1.MatchService/Watch'), methods.join(', '));
  assert.ok(
    methods.includes('grpc.reflection.v1.ServerReflection/ServerReflectionInfo'),
    methods.join(', '),
  );

  const request = { game: 'GAME_JUNGLE_SPEED', jungleSpeed: { maxPlayers: 2 } };
  const created = JSON.parse(
    await bufCurl(
      `${base}/totem.v1.MatchService/CreateMatch`,
      '--header',
      `Authorization: Bearer ${ORGANISER_TOKEN}`,
      '--data',
      JSON.stringify(request),
    ),
  );
  assert.match(created.matchId, /^[0-9a-f-]{36}$/);
  const view = await client.getMatch(created.matchId);
  assert.equal(view.summary.max_players, 2);
  assert.equal(view.summary.status, 'MATCH_STATUS_WAITING');
});
