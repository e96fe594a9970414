// What the bots of every game share: reproducible randomness and a table's result.

/**
 * A reproducible source of uniform numbers in [0, 1) (mulberry32).
 * @param {number} seed
 * @returns {() => number}
 */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Send a bot's commands over one Play stream from now on, as a player who races should
 * send them (a command on an open stream is stamped as soon as the server reads it,
 * JS-5.1); if the server refuses the stream (too many streams from this connection,
 * say), by Act calls.
 * @param {import('./client.js').Session} session
 * @returns {Promise<void>}
 */
export async function playOnStream(session) {
  try {
    await session.openPlay().opened();
  } catch {
    await session.closePlay();
  }
}

/**
 * @typedef {object} Standing one line of a result (ties share a place)
 * @property {number} place 1 is first
 * @property {number} seat
 * @property {string} name
 */

/**
 * The newest summary among the bots' final states.
 * @param {Record<string, any>[]} states `MatchState`s
 * @returns {Record<string, any>}
 */
export function newestSummary(states) {
  return states.reduce((a, b) => (b.summary.version > a.summary.version ? b : a)).summary;
}

/**
 * The result of an ended match, best first, with the players' names.
 * @param {Record<string, any>} summary a `MatchSummary`
 * @returns {Standing[]}
 */
export function standingsOf(summary) {
  const seatNames = new Map(summary.players.map((/** @type {any} */ p) => [p.seat, p.name]));
  /** @type {Standing[]} */
  const standings = summary.result.map((/** @type {any} */ r) => ({
    place: r.place,
    seat: r.seat,
    name: seatNames.get(r.seat) ?? '?',
  }));
  standings.sort((a, b) => a.place - b.place || a.seat - b.seat);
  return standings;
}
