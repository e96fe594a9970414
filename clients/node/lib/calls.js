// What the calls of the MatchService carry besides their request: the bearer token, and
// for a command the ActRequest, which an Act call and a Play stream's request both send.
import grpc from '@grpc/grpc-js';

import { DEFAULT_GAME, GAMES, gameInfo } from './games.js';

/**
 * @typedef {import('./messages.js').Message} Message
 * @typedef {import('./messages.js').Command} Command
 */

/**
 * The metadata of a call made with `token`: its bearer token, if any.
 * @param {string | null | undefined} token
 * @returns {grpc.Metadata}
 */
export function bearer(token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/**
 * The ActRequest of one command: what an Act call sends, and what a Play stream's
 * request carries (see Client.act for the arguments).
 * @param {string} matchId
 * @param {Command} command
 * @param {{seenVersion?: number, seat?: number | null, game?: string | null}} options
 * @returns {Message}
 */
export function actRequest(matchId, command, { seenVersion = 0, seat = null, game = null }) {
  const [field, body] = commandOf(command, game);
  /** @type {Message} */
  const request = { match_id: matchId, seen_version: seenVersion, [field]: body };
  if (seat !== null && seat !== undefined) request.seat = seat;
  return request;
}

/**
 * The member of ActRequest's `command` oneof and its message, for a command that names
 * its game (`{tribes: {...}}`) or a bare one of `game` (default: the default game).
 * @param {Command} command
 * @param {string | null} game
 * @returns {[string, Message]}
 */
function commandOf(command, game) {
  const keys = Object.keys(command ?? {}).filter((key) => command[key] != null);
  const named = Object.values(GAMES).find((g) => keys.length === 1 && keys[0] === g.field);
  if (named !== undefined) return [named.field, command[named.field]];
  const info = gameInfo(game ?? DEFAULT_GAME);
  if (keys.length !== 1 || !info.commands.includes(keys[0])) {
    throw new TypeError(
      `${JSON.stringify(command)} is not a ${info.title} command (one of ` +
        `${info.commands.join(', ')}); name the game: {${Object.keys(GAMES).join(': ..., ')}: ...}`,
    );
  }
  return [info.field, command];
}
