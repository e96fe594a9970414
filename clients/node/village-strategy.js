// What the Village bot decides, from an owed decision's choices and the state alone: the
// strategy of the Python Village bot (clients/python/totem_client/bots/village.py),
// decision for decision, so that bots of either language play alike. It never
// re-implements the rules: it chooses among what the server offers.
//
// - arrange (VI-2.1): fertile men, then fertile women, each into the least crowded of as
//   many cottages as there are couples (every fertile woman lives with a man and has
//   children, VI-2.4), then elders and children into the least crowded cottage, so that
//   one illness never takes every elder; beyond the number to house, children are left
//   out first;
// - choose (VI-2.2): as many helpful spells as its pole gives free (never sacrificing a
//   bird: they feed the family): abundance, twins, big cure;
// - place, submit: each on its own family, abundance where the hunters are, twins where
//   the fertile women live with a man, a cure where the elders are;
// - reveal (VI-2.3): every spell offered (they are all its own helpful ones);
// - victims (VI-2.6): children first, never an elder while anyone else may go; but of
//   another family one piece from a complete pole, its elders first, so that it loses a
//   piece (VI-3.2);
// - youth (VI-2.8): spares elders first, then the oldest others.
import { GAMES } from './lib/games.js';

/** @typedef {Record<string, any>} Message */

export const KIND_FIELDS = Object.freeze([
  'girl',
  'boy',
  'young_woman',
  'young_man',
  'mature_woman',
  'mature_man',
  'elder',
]);
/** Arrangement order (see the module's text). */
const ARRANGE_ORDER = Object.freeze([
  'young_man',
  'mature_man',
  'young_woman',
  'mature_woman',
  'elder',
  'boy',
  'girl',
]);
/** A pole this high wins (VI-4.1). */
const POLE_MAX = 6;
const HELPFUL = Object.freeze([
  'VILLAGE_SPELL_ABUNDANCE',
  'VILLAGE_SPELL_TWINS',
  'VILLAGE_SPELL_BIG_CURE',
]);
/** @param {string} field a VillageCounts field */
const kindOf = (field) => `VILLAGE_KIND_${field.toUpperCase()}`;
/** Victims of one's own family: children first, elders never while others may go. */
const OWN_VICTIMS = Object.freeze(KIND_FIELDS.map(kindOf));
/** Victims of another family about to win, and whom youth spares: elders first. */
const OTHER_VICTIMS = Object.freeze([...OWN_VICTIMS].reverse());

/**
 * The cottages of an arrangement (VI-2.1), from the decision's choices.
 * @param {Message} choices a `VillageArrangeChoices`
 * @returns {Message[]} three `VillageCounts`
 */
export function arrangeCottages(choices) {
  const members = choices.members;
  const men = members.young_man + members.mature_man;
  const women = members.young_woman + members.mature_woman;
  const couples = Math.max(1, Math.min(3, men, women));
  let left = choices.house;
  /** @type {Record<string, number>[]} */
  const cottages = [0, 1, 2].map(() => Object.fromEntries(KIND_FIELDS.map((k) => [k, 0])));
  const size = (/** @type {number} */ i) =>
    Object.values(cottages[i]).reduce((a, b) => a + b, 0);
  for (const kind of ARRANGE_ORDER) {
    const fertile = kind.startsWith('young') || kind.startsWith('mature');
    for (let n = 0; n < members[kind] && left > 0; n += 1) {
      const room = [0, 1, 2].filter((i) => size(i) < choices.capacity);
      const shared = fertile ? room.filter((i) => i < couples) : room;
      const candidates = shared.length ? shared : room;
      const target = candidates.reduce((best, i) => (size(i) < size(best) ? i : best));
      cottages[target][kind] += 1;
      left -= 1;
    }
  }
  return cottages;
}

/**
 * The cottage of `family` where `spell` helps most.
 * @param {Message} state a `VillageState`
 * @param {number} family
 * @param {string} spell
 */
export function bestCottage(state, family, spell) {
  const cottages = state.families[family].cottages;
  const value = (/** @type {Message} */ c) => {
    if (spell === 'VILLAGE_SPELL_ABUNDANCE') return c.boy + c.young_man + c.mature_man;
    if (spell === 'VILLAGE_SPELL_TWINS') {
      return c.young_man + c.mature_man ? c.young_woman + c.mature_woman : 0;
    }
    return c.elder * 10 + c.young_woman + c.young_man + c.mature_woman + c.mature_man;
  };
  let best = 0;
  cottages.forEach((/** @type {Message} */ c, /** @type {number} */ i) => {
    if (value(c) > value(cottages[best])) best = i;
  });
  return best;
}

/**
 * `count` people among `candidates`, by kind in `order`, highest cottage first.
 * @param {Message[]} candidates `VillageCandidate`s
 * @param {readonly string[]} order kinds
 * @param {number} count
 * @returns {Message[]} `VillagePerson`s
 */
function people(candidates, order, count) {
  const left = new Map(candidates.map((c) => [`${c.cottage}/${c.kind}`, c.count]));
  /** @type {Message[]} */
  const chosen = [];
  for (const kind of order) {
    for (const cottage of [2, 1, 0]) {
      const key = `${cottage}/${kind}`;
      while (chosen.length < count && (left.get(key) ?? 0) > 0) {
        left.set(key, left.get(key) - 1);
        chosen.push({ cottage, kind });
      }
    }
  }
  return chosen;
}

/**
 * The bot's answer to one owed decision: a `VillageCommand`.
 * @param {Message} state the seat's `VillageState`
 * @param {number} seat the bot's seat
 * @param {Message} owed a `VillageOwedDecision`
 * @returns {Message}
 */
export function decide(state, seat, owed) {
  const family = owed.family;
  switch (owed.kind) {
    case 'VILLAGE_DECISION_KIND_ARRANGE':
      return { arrange: { family, cottages: arrangeCottages(owed.arrange) } };
    case 'VILLAGE_DECISION_KIND_CHOOSE': {
      const spells = HELPFUL.filter((s) => owed.choose.spells.includes(s)).slice(
        0,
        owed.choose.pieces,
      );
      return { choose_spells: { family, spells, birds: 0 } };
    }
    case 'VILLAGE_DECISION_KIND_PLACE': {
      const spell = owed.place.hand[0];
      return {
        place_spell: {
          family,
          spell,
          target_family: family,
          cottage: bestCottage(state, family, spell),
        },
      };
    }
    case 'VILLAGE_DECISION_KIND_SUBMIT': {
      const placements = owed.place.hand.map((/** @type {string} */ spell) => ({
        spell,
        target_family: family,
        cottage: bestCottage(state, family, spell),
      }));
      return { submit_placements: { family, placements } };
    }
    case 'VILLAGE_DECISION_KIND_REVEAL':
      return { reveal_spells: { family, positions: owed.reveal.revealable } };
    case 'VILLAGE_DECISION_KIND_VICTIMS':
    case 'VILLAGE_DECISION_KIND_NAME_VICTIMS': {
      const choices = owed.victims;
      const starving = state.families[choices.starving];
      const threat = starving.seat !== seat && starving.pole >= POLE_MAX - 1;
      const order = threat ? OTHER_VICTIMS : OWN_VICTIMS;
      return {
        choose_victims: { family, victims: people(choices.candidates, order, choices.count) },
      };
    }
    case 'VILLAGE_DECISION_KIND_YOUTH': {
      /** @type {Message[]} */
      const spared = [];
      owed.youth.needs.forEach((/** @type {number} */ need, /** @type {number} */ cottage) => {
        const here = owed.youth.candidates.filter((/** @type {Message} */ c) => c.cottage === cottage);
        spared.push(...people(here, OTHER_VICTIMS, need));
      });
      return { spare_from_age: { family, spared } };
    }
    default:
      return owed.default;
  }
}

/** The members of `VillageCommand`'s oneof, as the game table lists them. */
const COMMANDS = GAMES.village.commands;

/**
 * A value with its defaults left out (zeros, empty lists, unset messages, the names of
 * oneofs) and its keys sorted, as JSON: two commands the server reads alike give one text.
 * @param {any} value
 * @returns {any}
 */
function bare(value) {
  if (Array.isArray(value)) return value.map(bare);
  if (value === null || typeof value !== 'object') return value;
  /** @type {Record<string, any>} */
  const kept = {};
  for (const key of Object.keys(value).sort()) {
    const field = bare(value[key]);
    const empty =
      field === null ||
      field === 0 ||
      field === '' ||
      field === false ||
      (typeof field === 'string' && field.endsWith('_UNSPECIFIED')) ||
      (Array.isArray(field) && field.length === 0) ||
      (typeof field === 'object' && !Array.isArray(field) && Object.keys(field).length === 0);
    if (!empty) kept[key] = field;
  }
  return kept;
}

/**
 * Whether two `VillageCommand`s are the same command (the one set member, its fields).
 * @param {Message} a
 * @param {Message} b
 */
export function sameCommand(a, b) {
  const which = (/** @type {Message} */ c) => COMMANDS.find((k) => c[k] != null);
  const [wa, wb] = [which(a), which(b)];
  if (wa !== wb) return false;
  if (wa === undefined) return true;
  return JSON.stringify(bare(a[wa])) === JSON.stringify(bare(b[wa]));
}
