// The client keeps the newest signed receipt of each match (docs/audit.md, "Receipts"),
// from Act answers and from a Play stream's, and writes it where asked; the receipt's
// signature verifies by the server's key, and `totem-replay verify --receipt` accepts
// the file it wrote.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { RECEIPT_FORMAT, Receipts } from '../index.js';
import { NO_SPECIALS, bounded, serverFor } from './support.js';

/** An Ed25519 public key (32 raw bytes) as Node's crypto takes it: SPKI DER. */
function ed25519Key(/** @type {Uint8Array} */ raw) {
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(raw)]);
  return createPublicKey({ key: spki, format: 'der', type: 'spki' });
}

/**
 * The bytes the receipt's signature covers (docs/audit.md, "Receipts").
 * @param {import('../lib/receipts.js').Receipt} r
 */
function receiptMessage(r) {
  const commitment = Buffer.from(r.head_commitment).toString('hex');
  return Buffer.from(
    `totem-arena receipt v1\n${r.match_id}\n${r.version}\n${commitment}\n${r.issued_at_ms}`,
  );
}

test('the newest receipt of each match is kept, signed by the server', async (t) => {
  const receiptsDir = mkdtempSync(path.join(tmpdir(), 'totem-receipts-'));
  t.after(() => rmSync(receiptsDir, { recursive: true, force: true }));
  const { server, client } = await serverFor(t, { clientOptions: { receiptsDir } });
  await client.waitReady();
  const { public_key: serverKey } = await client.unary('GetServerKey', {});

  const created = await client.createMatch({
    maxPlayers: 2,
    turnTimeoutMs: 0,
    specials: NO_SPECIALS,
  });
  const alice = await client.join(created.match_id, { name: 'alice' });
  const bob = await client.join(created.match_id, { name: 'bob' });

  const byAct = await alice.reveal();
  assert.equal(byAct.receipt.match_id, created.match_id);
  assert.equal(byAct.receipt.version, byAct.version);
  assert.deepEqual(Buffer.from(byAct.receipt.public_key), Buffer.from(serverKey));
  const key = ed25519Key(serverKey);
  assert.ok(verify(null, receiptMessage(byAct.receipt), key, byAct.receipt.signature));
  assert.equal(client.receipts.newest(created.match_id), byAct.receipt);

  const stream = client.play({ token: bob.token });
  const byPlay = await bounded(stream.act(created.match_id, { reveal: {} }));
  await stream.close();
  assert.ok(byPlay.receipt.version > byAct.receipt.version);
  assert.ok(verify(null, receiptMessage(byPlay.receipt), key, byPlay.receipt.signature));
  assert.equal(client.receipts.newest(created.match_id), byPlay.receipt);

  // An older receipt never replaces a newer one.
  assert.equal(client.receipts.keep(byAct.receipt), false);
  assert.equal(client.receipts.newest(created.match_id), byPlay.receipt);

  // The file holds the newest, and the judge's tool accepts it against the store.
  const file = client.receipts.path(created.match_id);
  assert.equal(path.dirname(file), receiptsDir);
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(saved.format, RECEIPT_FORMAT);
  assert.equal(saved.version, byPlay.receipt.version);
  const hexKey = Buffer.from(serverKey).toString('hex');
  const argv = ['--db', server.db, 'verify', created.match_id, '--receipt', file, '--key', hexKey];
  const verified = await promisify(execFile)('totem-replay', argv);
  const ok = `receipt:\\s+OK\\s+the server's receipt for version ${saved.version} `;
  assert.match(verified.stdout, new RegExp(ok));
});

test('a receipt that cannot be written is kept all the same', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'totem-receipts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const blocked = path.join(dir, 'a-file');
  writeFileSync(blocked, 'not a directory');
  const kept = new Receipts(blocked);
  const receipt = {
    match_id: 'm',
    version: 3,
    issued_at_ms: 1,
    head_commitment: new Uint8Array(32),
    signature: new Uint8Array(64),
    public_key: new Uint8Array(32),
  };
  assert.equal(kept.keep(receipt), true);
  assert.equal(kept.newest('m'), receipt);
  assert.ok(kept.writeError instanceof Error);
  assert.equal(kept.keep({ ...receipt, version: 2 }), false, 'an older one is not kept');
});
