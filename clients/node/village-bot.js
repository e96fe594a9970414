// A Village bot that plays from its watch stream alone, and a table of bots.
//
// Every watched event carries the seat's state after it, with the decisions its families
// owe now (`state.village.legal.decisions`), each with its deadline and `default`: the
// command the deadline would send for the family, valid as is. The bot answers each owed
// decision with that default, a little before its deadline would (after a short think),
// one command at a time. It never calls GetMatch.
//
// A command the rules refuse (FAILED_PRECONDITION: the deadline fired first, say) is not
// sent again for that decision.
import { randomBytes } from 'node:crypto';

import { RESUMABLE_CODES } from './lib/client.js';
import { TotemError } from './lib/errors.js';
import { newestSummary, playOnStream, standingsOf } from './lib/table.js';

/** Default delay before each command: [low, high] milliseconds. */
export const DEFAULT_THINK_MS = Object.freeze([5, 20]);
const MAX_TRANSIENT_FAILURES = 10;
const TRANSIENT_PAUSE_MS = 200;

/**
 * @typedef {import('./lib/client.js').Session} Session
 * @typedef {import('./lib/client.js').Client} Client
 * @typedef {import('./lib/client.js').MatchState} MatchState
 * @typedef {import('./lib/client.js').MatchEvent} MatchEvent
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
  /** @type {{version: number, kind: string, rule: string}[]} commands refused */
  refusals = [];
}

/** Plays every family of one seat of a Village match through a player Session. */
export class VillageBot {
  /**
   * @param {Session} session a player's session (with a seat and token)
   * @param {VillageBotOptions} [options]
   */
  constructor(session, options = {}) {
    if (session.seat === null) throw new TypeError('a bot needs a player session with a seat');
    this.thinkMs = options.thinkMs ?? DEFAULT_THINK_MS;
    const [low, high] = this.thinkMs;
    if (!(low >= 0 && low <= high)) throw new RangeError('delays must satisfy 0 <= low <= high');
    this.session = session;
    this.seat = session.seat;
    this.random = options.random ?? Math.random;
    this.stats = new VillageBotStats();
    /** The state carried by the last event of the stream. @type {MatchState | null} */
    this.state = null;
    /** @type {import('./lib/client.js').EventStream | null} */
    this.stream = null;
    /** @type {unknown} */
    this.failure = null;
    /** Decisions answered (or refused): never sent again. @type {Set<string>} */
    this.answered = new Set();
    this.transient = 0;
    /** @type {NodeJS.Timeout | null} */
    this.timer = null;
    /** @type {Promise<void> | null} */
    this.sending = null;
    this.stopped = false;
  }

  get name() {
    return this.session.name;
  }

  /**
   * Play until the match ends.
   * @returns {Promise<MatchState>} the state carried by the stream's last event
   */
  async run() {
    const stream = this.session.watch({ afterVersion: Math.max(this.session.seenVersion - 1, 0) });
    this.stream = stream;
    let playing = false;
    try {
      for await (const event of stream) {
        if (event.state) this.state = event.state;
        if (this.ended()) break;
        if (!playing && this.state) {
          // Once the watch stream has shown a state, so that it has its place among the
          // connection's streams before the Play stream asks for one.
          playing = true;
          await playOnStream(this.session);
        }
        this.plan();
      }
      if (this.failure !== null) throw this.failure;
      if (!this.ended()) {
        throw new TotemError('DATA_LOSS', 'the stream ended before the match did');
      }
      return /** @type {MatchState} */ (this.state);
    } finally {
      this.stopped = true;
      this.cancelTimer();
      stream.close();
      await this.sending;
      await this.session.closePlay();
    }
  }

  ended() {
    return this.state?.summary.status === 'MATCH_STATUS_ENDED';
  }

  cancelTimer() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The first owed decision not answered yet, in the newest state, or null. */
  next() {
    const state = this.session.state;
    if (state?.summary.status !== 'MATCH_STATUS_PLAYING') return null;
    const decisions = state.village?.legal?.decisions ?? [];
    const owed = decisions.find(
      (/** @type {Message} */ d) => d.default && !this.answered.has(decisionKey(d)),
    );
    return owed ? { decision: owed, version: state.summary.version } : null;
  }

  /** Decide from the newest state; schedule the answer, replacing any other plan. */
  plan() {
    this.cancelTimer();
    if (this.stopped || this.sending !== null || this.failure !== null) return;
    const found = this.next();
    if (found === null) return;
    const [low, high] = this.thinkMs;
    // Answer before the deadline: think at most half of the time left.
    const left = Number(found.decision.deadline_ms) - Date.now();
    const delay = Math.max(0, Math.min(low + (high - low) * this.random(), left / 2));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sending = this.answer(found.decision, found.version).finally(() => {
        this.sending = null;
        this.plan(); // with whatever arrived meanwhile
      });
    }, delay);
  }

  /**
   * Send an owed decision's default command.
   * @param {Message} decision a `VillageOwedDecision`
   * @param {number} version the version it was read at
   */
  async answer(decision, version) {
    const key = decisionKey(decision);
    try {
      await this.session.village(decision.default);
      this.answered.add(key);
      this.stats.sent += 1;
      this.transient = 0;
    } catch (error) {
      if (error instanceof TotemError && RESUMABLE_CODES.has(error.code)) {
        this.transient += 1;
        if (this.transient <= MAX_TRANSIENT_FAILURES) {
          await new Promise((resolve) => setTimeout(resolve, TRANSIENT_PAUSE_MS));
          return;
        }
      } else if (error instanceof TotemError && error.code === 'FAILED_PRECONDITION') {
        this.answered.add(key);
        this.stats.refusals.push({ version, kind: decision.kind, rule: error.rule });
        return;
      }
      this.failure = error; // run() throws it
      this.stream?.close();
    }
  }
}

/**
 * @typedef {object} VillageTableResult
 * @property {string} matchId
 * @property {import('./lib/client.js').CreatedMatch} created
 * @property {VillageBot[]} bots
 * @property {MatchState[]} states each bot's final state, from its own stream
 * @property {Record<string, any>} summary the final summary (the bots' latest)
 * @property {import('./lib/table.js').Standing[]} standings
 */

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
  const names = options.names ?? Array.from({ length: players }, (_, i) => `bot-${i + 1}`);
  if (names.length !== players) throw new RangeError('give one name per player');
  const created = await client.createMatch({
    ...options.matchOptions,
    game: 'village',
    maxPlayers: players,
  });
  const bots = [];
  for (const name of names) {
    const session = await client.join(created.match_id, { name, entropy: randomBytes(16) });
    bots.push(new VillageBot(session, { thinkMs: options.thinkMs, random: options.random }));
  }
  options.onSeated?.(created.match_id);
  const states = await Promise.all(bots.map((bot) => bot.run()));
  const summary = newestSummary(states);
  return {
    matchId: created.match_id,
    created,
    bots,
    states,
    summary,
    standings: standingsOf(summary),
  };
}
