// The games the client speaks, registered once: each game's module (lib/games/<game>.js)
// gives its table entry (its enum, its oneof member, its commands, its CreateMatch
// options) and the session's verbs for its commands. A new game adds its module and one
// line in each list below.
import * as jungleSpeed from './games/jungle_speed.js';
import * as tribes from './games/tribes.js';
import * as village from './games/village.js';

export { GRAB_TARGETS, VARIANTS, commands } from './games/jungle_speed.js';
export { BADGES, DIE_FACES, SPECIAL_TOTEMS, tribesCommands } from './games/tribes.js';
export { VILLAGE_SEXES, villageCommands } from './games/village.js';

/**
 * @typedef {import('./messages.js').Message} Message
 * @typedef {import('./games/jungle_speed.js').Acting} Acting
 * @typedef {import('./games/jungle_speed.js').JungleSpeedCreateOptions
 *   | import('./games/tribes.js').TribesCreateOptions
 *   | import('./games/village.js').VillageCreateOptions} GameOptions
 *   one game's options of `createMatch`
 */

/**
 * What the client knows of one game: its `Game` enum value, the member of the `oneof`s
 * that carries it (`CreateMatchRequest`, `ActRequest`, `MatchState`, `GetMatchResponse`,
 * `MatchEvent`: the same name everywhere), the commands of its `<Game>Command`, and how
 * `createMatch` turns its options into the `<Game>Options` message.
 * @typedef {object} GameInfo
 * @property {string} name 'jungle_speed', 'tribes' or 'village'
 * @property {string} title for messages: 'Jungle Speed', 'Tribes', 'Village'
 * @property {string} enum 'GAME_JUNGLE_SPEED', 'GAME_TRIBES', 'GAME_VILLAGE'
 * @property {string} field 'jungle_speed', 'tribes', 'village'
 * @property {readonly string[]} commands the members of its command's oneof
 * @property {(options: Record<string, any>) => Message} options
 */

/** The games the client speaks, by name. @type {Readonly<Record<string, GameInfo>>} */
export const GAMES = Object.freeze(
  Object.fromEntries([jungleSpeed.GAME, tribes.GAME, village.GAME].map((g) => [g.name, g])),
);

/** The game of a match created without naming one. */
export const DEFAULT_GAME = jungleSpeed.GAME.name;

/**
 * A session class with every game's verbs (`reveal`, `lift`, `village`...).
 * @template {Acting} TBase
 * @param {TBase} Base
 */
export function withGameVerbs(Base) {
  return village.villageVerbs(tribes.tribesVerbs(jungleSpeed.jungleSpeedVerbs(Base)));
}

/**
 * A game by its name ('tribes'), its `Game` enum name ('GAME_TRIBES') or in camel case
 * ('jungleSpeed').
 * @param {string} game
 * @returns {GameInfo}
 */
export function gameInfo(game) {
  const key = String(game)
    .replace(/^GAME_/i, '')
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toLowerCase();
  const info = GAMES[key];
  if (info === undefined) {
    throw new TypeError(`game must be one of ${Object.keys(GAMES).join(', ')}, not ${game}`);
  }
  return info;
}

/**
 * The game of a summary (`summary.game`, an enum name), or null for one this client does
 * not know.
 * @param {Message | null | undefined} summary
 * @returns {string | null}
 */
export function gameOfSummary(summary) {
  const info = Object.values(GAMES).find((g) => g.enum === summary?.game);
  return info ? info.name : null;
}

