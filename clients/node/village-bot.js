// A Village bot that plays from its watch stream alone, and a table of bots.
//
// Every watched event carries the seat's state after it, with the decisions its families
// owe now (`state.village.legal.decisions`), each with its deadline, its choices and
// `default`: the command the deadline would send. The bot answers each owed decision
// with the strategy of the Python Village bot (village-strategy.js: cottages that keep
// couples together, helpful spells on its own cottages, children before elders, a rival's
// elders when it is about to win), after a short think and before the deadline would
// answer, one command at a time. It never calls GetMatch.
//
// A command the server refuses (FAILED_PRECONDITION: the deadline fired first, say; or
// INVALID_ARGUMENT: the decision changed under it) is not sent again for that decision:
// the deadline's default then applies.
import { TotemError } from './lib/errors.js';
import { TableBot, playNewTable, tableNames } from './lib/table.js';
import { decide, sameCommand } from './village-strategy.js';

/** Default delay before each command: [low, high] milliseconds. */
export const DEFAULT_THINK_MS = Object.freeze([5, 20]);

/**
 * @typedef {import('./lib/session.js').Session} Session
 * @typedef {import('./lib/client.js').Client} Client
 * @typedef {import('./lib/messages.js').MatchState} MatchState
 * @typedef {import('./lib/messages.js').MatchEvent} MatchEvent
 * @typedef {Record<string, any>} Message
 *
 * @typedef {object} VillageBotOptions
 * @property {readonly number[]} [thinkMs] [low, high] of the delay before each command
 * @property {() => number} [random] uniform in [0, 1) (default Math.random)
 */

/**
 * What identifies one owed decision: its family, kind, rule and deadline.
 * @param {Message} decision a `VillageOwedDecision`
 */
export function decisionKey(decision) {
  return `${decision.family}/${decision.kind}/${decision.rule}/${decision.deadline_ms}`;
}

/** What one bot did, counted from its commands and the match's events. */
export class VillageBotStats {
  sent = 0; // commands accepted
  decided = 0; // of them, commands other than the decision's default
  /** @type {{version: number, kind: string, rule: string}[]} commands refused */
  refusals = [];
}

/** Plays every family of one seat of a Village match through a player Session. */
export class VillageBot extends TableBot {
  /**
   * @param {Session} session a player's session (with a seat and token)
   * @param {VillageBotOptions} [options]
   */
  constructor(session, options = {}) {
    super(session);
    this.thinkMs = options.thinkMs ?? DEFAULT_THINK_MS;
    const [low, high] = this.thinkMs;
    if (!(low >= 0 && low <= high)) throw new RangeError('delays must satisfy 0 <= low <= high');
    this.random = options.random ?? Math.random;
    this.stats = new VillageBotStats();
    /** Decisions answered (or refused): never sent again. @type {Set<string>} */
    this.answered = new Set();
  }

  /**
   * The first owed decision not answered yet, answered after a think, before its
   * deadline would answer it: at most half of the time left.
   * @param {MatchState} state
   * @returns {{delayMs: number, act: () => Promise<void>} | null}
   */
  nextAction(state) {
    const decisions = state.village?.legal?.decisions ?? [];
    const owed = decisions.find(
      (/** @type {Message} */ d) => d.default && !this.answered.has(decisionKey(d)),
    );
    if (!owed) return null;
    const [low, high] = this.thinkMs;
    const left = Number(owed.deadline_ms) - Date.now();
    const delayMs = Math.min(low + (high - low) * this.random(), left / 2);
    return { delayMs, act: () => this.answer(owed, state) };
  }

  /**
   * Send the strategy's command for an owed decision; one the server refuses is not sent
   * again.
   * @param {Message} decision a `VillageOwedDecision`
   * @param {MatchState} state the state it was read in
   */
  async answer(decision, state) {
    const key = decisionKey(decision);
    const version = state.summary.version;
    const command = decide(state.village, this.seat, decision);
    const refused = (/** @type {TotemError} */ error) => {
      this.answered.add(key);
      this.stats.refusals.push({ version, kind: decision.kind, rule: error.rule });
    };
    /** @type {TotemError | null} */
    let invalid = null;
    const sent = await this.send(async () => {
      try {
        await this.session.village(command);
      } catch (error) {
        // The decision may have changed under a command built for it (a deadline
        // passed): the command no longer fits. Not sent again; the stream goes on.
        if (!(error instanceof TotemError && error.code === 'INVALID_ARGUMENT')) throw error;
        invalid = error;
      }
    }, refused);
    if (invalid) {
      refused(invalid);
      return;
    }
    if (sent !== 'accepted') return;
    this.answered.add(key);
    this.stats.sent += 1;
    if (!sameCommand(command, decision.default)) this.stats.decided += 1;
  }
}

/** @typedef {import('./lib/table.js').TableResult<VillageBot>} VillageTableResult */

/**
 * Create a Village match for `players` seats with `matchOptions` (createMatch's Village
 * options), seat one bot in each, and play it until a pole is complete. The match starts
 * by itself when the last bot joins.
 * @param {Client} client
 * @param {number} players 2 to 4
 * @param {VillageBotOptions & {matchOptions?: Record<string, any>, names?: string[],
 *   onSeated?: (matchId: string) => void}} [options]
 * @returns {Promise<VillageTableResult>}
 */
export async function playVillageTable(client, players, options = {}) {
  if (!(players >= 2 && players <= 4)) throw new RangeError('Village is for 2 to 4 players');
  const names = tableNames(players, options.names);
  const matchOptions = { ...options.matchOptions, game: 'village', maxPlayers: players };
  return playNewTable(client, matchOptions, names, {
    bot: (session) => new VillageBot(session, { thinkMs: options.thinkMs, random: options.random }),
    onSeated: options.onSeated,
  });
}
