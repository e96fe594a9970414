// Jungle Speed in the client: its table entry, its CreateMatch options, its commands and
// the session's verbs for them.
import { checkKeys } from './shared.js';

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
 * Jungle Speed's options of `createMatch`.
 * @typedef {object} JungleSpeedCreateOptions
 * @property {'ES' | 'RU'} [variant] default 'ES' (JS-2.1)
 * @property {number} [maxPlayers] 2 to 10 (JS-1.5)
 * @property {number} [turnTimeoutMs] 0 turns the turn timer off (JS-3.4)
 * @property {number} [minRevealIntervalMs] (JS-3.4)
 * @property {{inward_arrows?: number, outward_arrows?: number, coloured_arrows?: number}}
 *   [specials] (JS-1.3)
 * @property {number[]} [prearrangedDeal] card ids from the top of the deck (JS-2.4)
 */

/** Jungle Speed variants by their short names (JS-2.1). */
export const VARIANTS = Object.freeze({
  ES: 'JUNGLE_SPEED_VARIANT_ES',
  RU: 'JUNGLE_SPEED_VARIANT_RU',
});

/** What an ES grab resolves when a duel and an inward-arrows race are open (JS-6.1). */
export const GRAB_TARGETS = Object.freeze({
  default: 'GRAB_TARGET_UNSPECIFIED',
  duel: 'GRAB_TARGET_DUEL',
  arrows: 'GRAB_TARGET_ARROWS',
});

/**
 * The `JungleSpeedOptions` message of `createMatch`'s options.
 * @param {Record<string, any>} options
 * @returns {Message}
 */
function jungleSpeedOptions(options) {
  checkKeys(options, JUNGLE_SPEED_OPTIONS, 'Jungle Speed');
  const name = /** @type {'ES' | 'RU'} */ (String(options.variant ?? 'ES').toUpperCase());
  const variant = VARIANTS[name];
  if (variant === undefined) {
    throw new TypeError(`variant must be one of ${Object.keys(VARIANTS).join(', ')}`);
  }
  /** @type {Message} */
  const message = { variant };
  if (options.maxPlayers !== undefined) message.max_players = options.maxPlayers;
  if (options.turnTimeoutMs !== undefined) message.turn_timeout_ms = options.turnTimeoutMs;
  if (options.minRevealIntervalMs !== undefined) {
    message.min_reveal_interval_ms = options.minRevealIntervalMs;
  }
  if (options.specials !== undefined) message.specials = options.specials;
  if (options.prearrangedDeal !== undefined) message.prearranged_deal = options.prearrangedDeal;
  return message;
}

const JUNGLE_SPEED_OPTIONS = Object.freeze([
  'variant',
  'maxPlayers',
  'turnTimeoutMs',
  'minRevealIntervalMs',
  'specials',
  'prearrangedDeal',
]);

/** Commands of Jungle Speed, as bare `JungleSpeedCommand` objects. */
export const commands = Object.freeze({
  start: () => ({ start: {} }),
  reveal: () => ({ reveal: {} }),
  /** @param {GrabTargetName} [target] */
  grab: (target = 'default') => {
    const value = GRAB_TARGETS[target];
    if (value === undefined) throw new TypeError(`unknown grab target ${target}`);
    return { grab: { target: value } };
  },
});

/** Jungle Speed's entry in the game table. @type {GameInfo} */
export const GAME = Object.freeze({
  name: 'jungle_speed',
  title: 'Jungle Speed',
  enum: 'GAME_JUNGLE_SPEED',
  field: 'jungle_speed',
  commands: Object.freeze(['start', 'reveal', 'grab']),
  options: jungleSpeedOptions,
});

/**
 * A session class with Jungle Speed's verbs.
 * @template {Acting} TBase
 * @param {TBase} Base
 */
export function jungleSpeedVerbs(Base) {
  return class extends Base {
    /** Reveal the top face-down card; only on one's turn (JS-3.1). */
    reveal() {
      return this.act(commands.reveal());
    }

    /**
     * Grab the totem (JS-5). `target` chooses between an open duel and an inward-arrows
     * race (ES only, JS-6.1); 'default' lets the server choose.
     * @param {GrabTargetName} [target]
     */
    grab(target = 'default') {
      return this.act(commands.grab(target));
    }
  };
}
