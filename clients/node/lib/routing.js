// Which server instance a match's players should use, when several serve one store: see
// docs/operations.md. Any instance serves any match, but receive order is exact only
// within one; every client that knows the same list of instances picks the same one for
// a match (rendezvous hashing), the Python client's totem_client.routing included.
import { createHash } from 'node:crypto';

/**
 * @param {string} matchId
 * @param {string} address
 * @returns {bigint}
 */
function weight(matchId, address) {
  return createHash('sha256').update(`${matchId}\n${address}`).digest().readBigUInt64BE(0);
}

/**
 * The addresses in the order the players of `matchId` should try them.
 * @param {string} matchId
 * @param {string[]} addresses
 * @returns {string[]}
 */
export function instancesFor(matchId, addresses) {
  if (addresses.length === 0) {
    throw new RangeError('no server instance to choose from');
  }
  const weights = new Map([...new Set(addresses)].map((a) => [a, weight(matchId, a)]));
  return [...weights.keys()].sort((a, b) => {
    const wa = /** @type {bigint} */ (weights.get(a));
    const wb = /** @type {bigint} */ (weights.get(b));
    if (wa !== wb) return wa > wb ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0; // ties to the smaller address, as in Python
  });
}

/**
 * The address every player of `matchId` should use.
 * @param {string} matchId
 * @param {string[]} addresses
 * @returns {string}
 */
export function instanceFor(matchId, addresses) {
  return instancesFor(matchId, addresses)[0];
}
