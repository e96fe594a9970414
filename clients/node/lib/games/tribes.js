// Tribes in the client: its table entry, its CreateMatch options, its commands and the
// session's verbs for them.
import { checkKeys, enumValue, spaceNumber } from './shared.js';

/**
 * @typedef {import('../messages.js').Message} Message
 * @typedef {import('../messages.js').Command} Command
 * @typedef {import('../messages.js').ActResponse} ActResponse
 * @typedef {import('../messages.js').GrabTargetName} GrabTargetName
 * @typedef {import('../games.js').GameInfo} GameInfo
 * @typedef {new (...args: any[]) => {act(command: Command): Promise<ActResponse>}} Acting
 *   a session class: its commands go through `act`
 */

/**
 * Tribes' options of `createMatch`.
 * @typedef {object} TribesCreateOptions
 * @property {number} [maxPlayers] 2 to 4 (TR-1.1)
 * @property {number} [turnTimeoutMs] 0 turns the turn timer off (the server then moves
 *   for the player, see docs/rules/tribes.md)
 * @property {number} [boardSize] 3 to 5 (TR-1.2); default by the player count
 * @property {number} [roundMoveLimit] moves before a round is drawn (TR-2.5)
 * @property {boolean} [extended] the extended game (TR-5)
 * @property {string[]} [diceFaces] the die's faces, 'blank', 'large', 'small' (TR-5.1)
 * @property {number[]} [salvationSpaces] the Salvation Spaces (TR-5.6); needs boardSize
 * @property {number[][]} [prearrangedCards] each round's Cards of Truth, by seat (TR-2.1)
 * @property {string[]} [prearrangedDice] each turn's roll, face names (TR-5.1)
 */

/** Tribes badges by name (TR-1.5), for `place`: a winning move names the one it takes. */
export const BADGES = Object.freeze({
  wisdom: 'TRIBES_BADGE_WISDOM',
  loyalty: 'TRIBES_BADGE_LOYALTY',
  boldness: 'TRIBES_BADGE_BOLDNESS',
  tenacity: 'TRIBES_BADGE_TENACITY',
});

/** Faces of the Tribes Dice of Fate by name (TR-5.1), for the options. */
export const DIE_FACES = Object.freeze({
  blank: 'TRIBES_DIE_FACE_BLANK',
  large: 'TRIBES_DIE_FACE_LARGE',
  small: 'TRIBES_DIE_FACE_SMALL',
});

/** The special totems of the Tribes extended game by name (TR-5.3), for `place`. */
export const SPECIAL_TOTEMS = Object.freeze({
  doom: 'TRIBES_TOTEM_KIND_DOOM',
  mini: 'TRIBES_TOTEM_KIND_MINI',
});

/**
 * The `TribesOptions` message of `createMatch`'s options.
 * @param {Record<string, any>} options
 * @returns {Message}
 */
function tribesOptions(options) {
  checkKeys(options, TRIBES_OPTIONS, 'Tribes');
  /** @param {string} face */
  const face = (face) => enumValue(DIE_FACES, face, 'a die face');
  /** @type {Message} */
  const message = { extended: Boolean(options.extended) };
  if (options.maxPlayers !== undefined) message.max_players = options.maxPlayers;
  if (options.boardSize !== undefined) message.board_size = options.boardSize;
  if (options.turnTimeoutMs !== undefined) message.turn_timeout_ms = options.turnTimeoutMs;
  if (options.roundMoveLimit !== undefined) message.round_move_limit = options.roundMoveLimit;
  if (options.diceFaces !== undefined) message.dice_faces = options.diceFaces.map(face);
  if (options.salvationSpaces !== undefined) {
    message.salvation_spaces = { spaces: options.salvationSpaces };
  }
  if (options.prearrangedCards !== undefined) {
    message.prearranged_cards = options.prearrangedCards.map((/** @type {number[]} */ cards) => ({
      cards,
    }));
  }
  if (options.prearrangedDice !== undefined) {
    message.prearranged_dice = options.prearrangedDice.map(face);
  }
  return message;
}

const TRIBES_OPTIONS = Object.freeze([
  'maxPlayers',
  'boardSize',
  'turnTimeoutMs',
  'roundMoveLimit',
  'extended',
  'diceFaces',
  'salvationSpaces',
  'prearrangedCards',
  'prearrangedDice',
]);

/**
 * Commands of Tribes, each naming its game: `{tribes: TribesCommand}`.
 */
export const tribesCommands = Object.freeze({
  /** Start the match early, with at least two seats taken (TR-1.1). */
  start: () => ({ tribes: { start: {} } }),
  /**
   * Lift the top totem of `space`: the first half of a move from the board (TR-2.2a).
   * @param {number} space
   */
  lift: (space) => ({ tribes: { lift: { space: spaceNumber(space, 'space') } } }),
  /**
   * Place a totem on `destination`: the lifted one (neither `size` nor `special`), the
   * totem of `size` from one's mat, or a special totem ('doom', 'mini') from beside the
   * board. `badge` ('wisdom', 'loyalty', 'boldness', 'tenacity', or an enum name) is the
   * badge the move takes if it wins the round with one's own line (TR-3.4).
   * @param {number} destination
   * @param {{size?: number, special?: string, badge?: string | null}} [options]
   */
  place: (destination, { size, special, badge } = {}) => {
    /** @type {Message} */
    const place = { destination: spaceNumber(destination, 'destination') };
    if (size !== undefined && special !== undefined) {
      throw new TypeError('name a size or a special totem, not both');
    }
    if (size !== undefined) place.size = size;
    if (special !== undefined) place.special = enumValue(SPECIAL_TOTEMS, special, 'special');
    if (badge !== undefined && badge !== null) place.badge = enumValue(BADGES, badge, 'badge');
    return { tribes: { place } };
  },
  /**
   * Place the totem of one of the legal actions' place options
   * (`state.tribes.legal.places`) on one of its destinations.
   * @param {Message} option a `TribesPlaceOption`
   * @param {number} destination
   * @param {{badge?: string | null}} [options]
   */
  placeOption: (option, destination, { badge } = {}) => {
    if (option.source === 'TRIBES_PLACE_SOURCE_MAT') {
      return tribesCommands.place(destination, { size: option.totem.size, badge });
    }
    if (option.source === 'TRIBES_PLACE_SOURCE_BESIDE') {
      return tribesCommands.place(destination, { special: option.totem.kind, badge });
    }
    return tribesCommands.place(destination, { badge });
  },
  /**
   * Referee only: penalise `seat` for coaching (TR-4.1).
   * @param {number} seat
   */
  penalise: (seat) => ({ tribes: { penalise: { seat: spaceNumber(seat, 'seat') } } }),
});

/** Tribes' entry in the game table. @type {GameInfo} */
export const GAME = Object.freeze({
  name: 'tribes',
  title: 'Tribes',
  enum: 'GAME_TRIBES',
  field: 'tribes',
  commands: Object.freeze(['start', 'lift', 'place', 'penalise']),
  options: tribesOptions,
});

/**
 * A session class with Tribes' verbs.
 * @template {Acting} TBase
 * @param {TBase} Base
 */
export function tribesVerbs(Base) {
  return class extends Base {
    /**
     * Tribes: lift the top totem of `space`, the first half of a move from the board
     * (TR-2.2a); then `place` it.
     * @param {number} space
     */
    lift(space) {
      return this.act(tribesCommands.lift(space));
    }

    /**
     * Tribes: place the lifted totem (neither `size` nor `special`), the totem of `size`
     * from one's mat, or a special totem ('doom', 'mini') from beside the board, on
     * `destination`; `badge` names the badge the move takes if it wins (TR-3.4).
     * @param {number} destination
     * @param {{size?: number, special?: string, badge?: string | null}} [options]
     */
    place(destination, options = {}) {
      return this.act(tribesCommands.place(destination, options));
    }

    /**
     * Tribes: place the totem of one of the legal actions' place options.
     * @param {Message} option a `TribesPlaceOption` from `state.tribes.legal.places`
     * @param {number} destination one of its destinations
     * @param {{badge?: string | null}} [options]
     */
    placeOption(option, destination, options = {}) {
      return this.act(tribesCommands.placeOption(option, destination, options));
    }

    /**
     * Tribes, the referee's session only: penalise `seat` for coaching (TR-4.1).
     * @param {number} seat
     */
    penalise(seat) {
      return this.act(tribesCommands.penalise(seat));
    }
  };
}
