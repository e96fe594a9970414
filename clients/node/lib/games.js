// The games the client speaks: their table (GAMES), the options of each game's
// CreateMatch, and each game's commands, with the enum names they take by short names.

/**
 * @typedef {import('./messages.js').Message} Message
 * @typedef {import('./messages.js').GrabTargetName} GrabTargetName
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
export const GAMES = Object.freeze({
  jungle_speed: Object.freeze({
    name: 'jungle_speed',
    title: 'Jungle Speed',
    enum: 'GAME_JUNGLE_SPEED',
    field: 'jungle_speed',
    commands: Object.freeze(['start', 'reveal', 'grab']),
    options: jungleSpeedOptions,
  }),
  tribes: Object.freeze({
    name: 'tribes',
    title: 'Tribes',
    enum: 'GAME_TRIBES',
    field: 'tribes',
    commands: Object.freeze(['start', 'lift', 'place', 'penalise']),
    options: tribesOptions,
  }),
  village: Object.freeze({
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
  }),
});

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

/**
 * An enum value from a short name ('wisdom') or the enum's own name
 * ('TRIBES_BADGE_WISDOM').
 * @param {Readonly<Record<string, string>>} table
 * @param {string} value
 * @param {string} what for the error
 * @returns {string}
 */
function enumValue(table, value, what) {
  const found = table[String(value).toLowerCase()];
  if (found !== undefined) return found;
  if (Object.values(table).includes(value)) return value;
  throw new TypeError(`${what} must be one of ${Object.keys(table).join(', ')}, not ${value}`);
}

/**
 * @param {Record<string, any>} options
 * @param {readonly string[]} known
 * @param {string} title
 */
function checkKeys(options, known, title) {
  for (const key of Object.keys(options)) {
    if (options[key] !== undefined && !known.includes(key)) {
      throw new TypeError(`${key} is not an option of ${title}; its options: ${known.join(', ')}`);
    }
  }
}

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

/**
 * @param {number} value
 * @param {string} what
 * @returns {number}
 */
function spaceNumber(value, what) {
  if (!Number.isInteger(value) || value < 0) {
    throw new TypeError(`${what} must be a number from 0, not ${value}`);
  }
  return value;
}
