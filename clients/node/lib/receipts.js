// The newest signed receipt of each match a client was answered for (docs/audit.md,
// "Receipts"): every ActResponse (Act, or a Play stream's `applied`) carries one. A
// player who keeps the newest can later prove that a store or bundle holds at least that
// version with that history: `totem-replay verify MATCH --receipt FILE`, FILE in the
// format `receiptObject` gives (the Python client writes the same).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The value of a receipt file's `format`. */
export const RECEIPT_FORMAT = 'totem-arena receipt v1';
/** A receipt file's name ends so: `<match id>.receipt.json`. */
export const RECEIPT_SUFFIX = '.receipt.json';

/**
 * @typedef {object} Receipt a `totem.v1.Receipt` as the client decodes it
 * @property {string} match_id
 * @property {number} version
 * @property {Uint8Array} head_commitment
 * @property {number} issued_at_ms
 * @property {Uint8Array} signature
 * @property {Uint8Array} public_key
 */

/**
 * A receipt as its file holds it: byte fields in hex.
 * @param {Receipt} receipt
 */
export function receiptObject(receipt) {
  const hex = (/** @type {Uint8Array} */ bytes) => Buffer.from(bytes).toString('hex');
  return {
    format: RECEIPT_FORMAT,
    match_id: receipt.match_id,
    version: Number(receipt.version),
    head_commitment: hex(receipt.head_commitment),
    issued_at_ms: Number(receipt.issued_at_ms),
    signature: hex(receipt.signature),
    public_key: hex(receipt.public_key),
  };
}

/**
 * Write `receipt` to `file` in the receipt file format, whole or not at all.
 * @param {Receipt} receipt
 * @param {string} file
 */
export function writeReceipt(receipt, file) {
  const partial = `${file}.partial`;
  writeFileSync(partial, `${JSON.stringify(receiptObject(receipt), null, 2)}\n`);
  renameSync(partial, file);
  return file;
}

/** The newest receipt per match; written to `directory` as it comes, if given. */
export class Receipts {
  /** @param {string | null} [directory] */
  constructor(directory = null) {
    this.directory = directory;
    /** @type {Map<string, Receipt>} */
    this.byMatch = new Map();
    /**
     * Why the last receipt could not be written to `directory`, if it could not (it is
     * kept in memory all the same, and the next is tried again).
     * @type {Error | null}
     */
    this.writeError = null;
  }

  /**
   * Keep `receipt` if it is its match's newest (a later version, or the same version
   * signed later); whether it was.
   * @param {Receipt | null | undefined} receipt
   * @returns {boolean}
   */
  keep(receipt) {
    if (!receipt?.match_id) return false;
    const kept = this.byMatch.get(receipt.match_id);
    const later =
      kept === undefined ||
      Number(receipt.version) > Number(kept.version) ||
      (Number(receipt.version) === Number(kept.version) &&
        Number(receipt.issued_at_ms) > Number(kept.issued_at_ms));
    if (!later) return false;
    this.byMatch.set(receipt.match_id, receipt);
    if (this.directory !== null) {
      try {
        mkdirSync(this.directory, { recursive: true });
        writeReceipt(receipt, this.path(receipt.match_id));
      } catch (error) {
        // The command was applied all the same: its answer must reach the caller.
        this.writeError = /** @type {Error} */ (error);
      }
    }
    return true;
  }

  /**
   * The newest receipt kept for `matchId`, if any.
   * @param {string} matchId
   * @returns {Receipt | undefined}
   */
  newest(matchId) {
    return this.byMatch.get(matchId);
  }

  /**
   * Where the receipt of `matchId` is written.
   * @param {string} matchId
   */
  path(matchId) {
    if (this.directory === null) throw new Error('these receipts are kept in memory only');
    return path.join(this.directory, `${matchId}${RECEIPT_SUFFIX}`);
  }
}
