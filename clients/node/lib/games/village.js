// Village in the client: its table entry, its CreateMatch options, its commands and the
// session's verb for them.
import { checkKeys, enumValue } from './shared.js';

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
 * Village's options of `createMatch`: see `villageOptions`.
 * @typedef {Record<string, any>} VillageCreateOptions
 */

/**
 * The `VillageOptions` message of `createMatch`'s options: the variations (booleans
 * `village`, `spellsA`, `spellsB`, `feastA`, `feastB`, `totemA`, `totemB`), the
 * deadlines in milliseconds (`arrangeTimeoutMs`, `chooseTimeoutMs`, `placeTimeoutMs`,
 * `revealTimeoutMs`, `victimsTimeoutMs`, `youthTimeoutMs`), `maxPlayers` and
 * `prearrangedSexes` ('girl', 'boy' or enum names).
 * @param {Record<string, any>} options
 * @returns {Message}
 */
function villageOptions(options) {
  checkKeys(options, VILLAGE_OPTIONS, 'Village');
  /** @type {Message} */
  const message = {};
  for (const key of VILLAGE_OPTIONS) {
    const value = options[key];
    if (value === undefined) continue;
    const field = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (key === 'prearrangedSexes') {
      message.prearranged_sexes = value.map((/** @type {string} */ sex) =>
        enumValue(VILLAGE_SEXES, sex, 'a sex'),
      );
    } else if (key.endsWith('Ms') || key === 'maxPlayers') {
      message[field] = value;
    } else {
      message[field] = Boolean(value);
    }
  }
  return message;
}

/** Sexes of Village children by name (VI-2.4), for `prearrangedSexes`. */
export const VILLAGE_SEXES = Object.freeze({
  girl: 'VILLAGE_SEX_GIRL',
  boy: 'VILLAGE_SEX_BOY',
});

const VILLAGE_OPTIONS = Object.freeze([
  'maxPlayers',
  'village',
  'spellsA',
  'spellsB',
  'feastA',
  'feastB',
  'totemA',
  'totemB',
  'arrangeTimeoutMs',
  'chooseTimeoutMs',
  'placeTimeoutMs',
  'revealTimeoutMs',
  'victimsTimeoutMs',
  'youthTimeoutMs',
  'prearrangedSexes',
]);

/**
 * Commands of Village, each naming its game: `{village: VillageCommand}`. Every command
 * but `start` names the family it is for (VI-7.1); messages have the .proto field names.
 */
export const villageCommands = Object.freeze({
  /** Start the match early, with at least two seats taken (VI-1.1). */
  start: () => ({ village: { start: {} } }),
  /**
   * Any Village command as its oneof member and message, e.g. the `default` of an owed
   * decision (`state.village.legal.decisions[i].default`), sent as is.
   * @param {Message} command a `VillageCommand`
   */
  of: (command) => ({ village: command }),
  /**
   * @param {number} family
   * @param {Message[]} cottages three `VillageCounts`
   */
  arrange: (family, cottages) => ({ village: { arrange: { family, cottages } } }),
  /**
   * @param {number} family
   * @param {string[]} spells `VillageSpell` enum names
   * @param {number} [birds]
   */
  chooseSpells: (family, spells, birds = 0) => ({
    village: { choose_spells: { family, spells, birds } },
  }),
  /**
   * @param {number} family
   * @param {string} spell
   * @param {number} targetFamily
   * @param {number} cottage
   */
  placeSpell: (family, spell, targetFamily, cottage) => ({
    village: { place_spell: { family, spell, target_family: targetFamily, cottage } },
  }),
  /** @param {number} family */
  passSpells: (family) => ({ village: { pass_spells: { family } } }),
  /**
   * @param {number} family
   * @param {Message[]} placements `VillagePlacement`s
   */
  submitPlacements: (family, placements) => ({
    village: { submit_placements: { family, placements } },
  }),
  /**
   * @param {number} family
   * @param {number[]} positions
   */
  revealSpells: (family, positions) => ({ village: { reveal_spells: { family, positions } } }),
  /**
   * @param {number} family
   * @param {Message[]} victims `VillagePerson`s
   */
  chooseVictims: (family, victims) => ({ village: { choose_victims: { family, victims } } }),
  /**
   * @param {number} family
   * @param {Message[]} spared `VillagePerson`s
   */
  spareFromAge: (family, spared) => ({ village: { spare_from_age: { family, spared } } }),
});

/** Village's entry in the game table. @type {GameInfo} */
export const GAME = Object.freeze({
  name: 'village',
  title: 'Village',
  enum: 'GAME_VILLAGE',
  field: 'village',
  commands: Object.freeze([
    'start',
    'arrange',
    'choose_spells',
    'place_spell',
    'pass_spells',
    'submit_placements',
    'reveal_spells',
    'choose_victims',
    'spare_from_age',
  ]),
  options: villageOptions,
});

/**
 * A session class with Village's verb.
 * @template {Acting} TBase
 * @param {TBase} Base
 */
export function villageVerbs(Base) {
  return class extends Base {
    /**
     * Village: send a Village command, a bare `VillageCommand` message (`{arrange: {...}}`,
     * or an owed decision's `default`) or one of `villageCommands`.
     * @param {Message} command
     */
    village(command) {
      return this.act(command.village ? command : villageCommands.of(command));
    }
  };
}
