// What the bots of every game share: a bot's life on its streams, reproducible
// randomness, a table of bots in a new match or in an existing one's seats, and a
// table's result.
import { randomBytes } from 'node:crypto';

import { TotemError } from './errors.js';
import { gameInfo } from './games.js';
import { PATIENCE, pause } from './reconnect.js';
import { RESUMABLE_CODES } from './streams.js';

/**
 * Transient failures of commands in a row (server unavailable) before a bot gives up:
 * about two minutes of the server's absence (lib/reconnect.js).
 */
export const MAX_TRANSIENT_FAILURES = PATIENCE;

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
 * @param {import('./session.js').Session} session
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
 * @typedef {import('./session.js').Session} Session
 * @typedef {import('./messages.js').MatchState} MatchState
 * @typedef {import('./messages.js').MatchEvent} MatchEvent
 * @typedef {'accepted' | 'refused' | 'transient' | 'stopped'} Sent what became of a command
 */

/**
 * A bot of any game, playing one seat through a player Session from its watch stream
 * alone: every watched event carries the seat's state after it, with its legal actions,
 * so a bot never calls GetMatch and never re-implements the rules. A game's bot says
 * what to do next (`nextAction`) and may count what happens (`count`); this class runs
 * the stream, sends one command at a time over a Play stream, and plans again with
 * whatever arrived meanwhile.
 */
export class TableBot {
  /** @param {Session} session a player's session (with a seat and token) */
  constructor(session) {
    if (session.seat === null) throw new TypeError('a bot needs a player session with a seat');
    this.session = session;
    this.seat = session.seat;
    /** The state carried by the last event of the stream. @type {MatchState | null} */
    this.state = null;
    /** @type {import('./streams.js').EventStream | null} */
    this.stream = null;
    /** What stops the bot; run() throws it. @type {unknown} */
    this.failure = null;
    this.transient = 0;
    /** @type {NodeJS.Timeout | null} */
    this.timer = null;
    /** A command on its way: nothing else is planned meanwhile. @type {Promise<void> | null} */
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
    // From the last event seen (or the first): its state starts the bot off.
    const stream = this.session.watch({
      afterVersion: Math.max(this.session.seenVersion - 1, 0),
      maxFailures: PATIENCE,
    });
    this.stream = stream;
    let playing = false;
    try {
      for await (const event of stream) {
        this.count(event);
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

  /**
   * Count what an event says of this seat (a game's bot keeps its own statistics).
   * @param {MatchEvent} _event
   */
  count(_event) {}

  /**
   * The next command to send and when, from the session's newest state; null when
   * there is none. A game's bot says this; it is asked only while no command is on its
   * way.
   * @param {MatchState} _state
   * @returns {{delayMs: number, act: () => Promise<void>} | null}
   */
  nextAction(_state) {
    throw new TypeError('a bot says its next action');
  }

  /** Decide from the newest state; schedule the chosen action, replacing any other. */
  plan() {
    this.cancelTimer();
    if (this.stopped || this.sending !== null || this.failure !== null) return;
    const state = this.session.state;
    if (state?.summary.status !== 'MATCH_STATUS_PLAYING') return;
    const next = this.nextAction(state);
    if (next === null) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.sending = next.act().finally(() => {
          this.sending = null;
          this.plan(); // with whatever arrived meanwhile
        });
      },
      Math.max(0, next.delayMs),
    );
  }

  /**
   * Send a command. A refusal by the rules (FAILED_PRECONDITION: the state moved on,
   * someone was faster) is handed to `refused` for the bot to note; a transient failure
   * (the server restarting) returns after the pause the server asked for (else up to a
   * second), up to MAX_TRANSIENT_FAILURES times in a row; anything else stops the bot.
   * @param {() => Promise<unknown>} command
   * @param {(error: TotemError) => void} refused
   * @returns {Promise<Sent>}
   */
  async send(command, refused) {
    try {
      await command();
      this.transient = 0;
      return 'accepted';
    } catch (error) {
      if (error instanceof TotemError && RESUMABLE_CODES.has(error.code)) {
        this.transient += 1;
        if (this.transient <= MAX_TRANSIENT_FAILURES) {
          const wait = pause(this.transient, error);
          await new Promise((resolve) => setTimeout(resolve, wait));
          return 'transient';
        }
      } else if (error instanceof TotemError && error.code === 'FAILED_PRECONDITION') {
        refused(error);
        return 'refused';
      }
      this.failure = error; // run() throws it
      this.stream?.close();
      return 'stopped';
    }
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

/**
 * The names of a table's `players` bots: `names` if given (one per player), else
 * 'bot-1', 'bot-2'...
 * @param {number} players
 * @param {string[]} [names]
 * @returns {string[]}
 */
export function tableNames(players, names) {
  const chosen = names ?? Array.from({ length: players }, (_, i) => `bot-${i + 1}`);
  if (chosen.length !== players) throw new RangeError('give one name per player');
  return chosen;
}

/**
 * @template {TableBot} B
 * @typedef {object} TableResult what a table of bots played
 * @property {string} matchId
 * @property {import('./client.js').CreatedMatch} created
 * @property {B[]} bots
 * @property {MatchState[]} states each bot's final state, from its own stream
 * @property {Record<string, any>} summary the final summary (the bots' latest)
 * @property {Standing[]} standings
 */

/**
 * Create a match with `matchOptions` (createMatch's), seat one bot per name in it, in
 * order (each joins with fresh entropy for the seed; `bot` makes the bot of a session,
 * its second argument the bot's index), and play it to the end: the match starts by
 * itself when the last bot joins. A game's table of bots (`playTable`, ...) checks its
 * player count and options, then calls this.
 * @template {TableBot} B
 * @param {import('./client.js').Client} client
 * @param {import('./client.js').CreateMatchOptions} matchOptions
 * @param {string[]} names
 * @param {{bot: (session: Session, index: number) => B,
 *   onSeated?: (matchId: string) => void}} options
 * @returns {Promise<TableResult<B>>}
 */
export async function playNewTable(client, matchOptions, names, { bot, onSeated }) {
  const created = await client.createMatch(matchOptions);
  const bots = [];
  for (const [i, name] of names.entries()) {
    const session = await client.join(created.match_id, { name, entropy: randomBytes(16) });
    bots.push(bot(session, i));
  }
  onSeated?.(created.match_id);
  const states = await Promise.all(bots.map((b) => b.run()));
  const summary = newestSummary(states);
  const standings = standingsOf(summary);
  return { matchId: created.match_id, created, bots, states, summary, standings };
}

/**
 * Seat a bot in each seat of an existing match of `game` whose token is given, and play
 * it to the end: the way to play a fork's seats (`totem-replay fork` prints one token per
 * seat), all of them or only some, the others left to their players. Each token's seat
 * is the one the server says it holds (`Client.takeSeat`); `bot` makes the bot of a
 * session, its second argument the bot's index among the tokens. Rejects with a
 * RangeError for no token or two tokens of one seat, a TypeError for a match of another
 * game, and the server's TotemError for a token that holds no seat there.
 * @template {TableBot} B
 * @param {import('./client.js').Client} client
 * @param {string} matchId
 * @param {string[]} tokens
 * @param {{game: string, bot: (session: Session, index: number) => B,
 *   onSeated?: (matchId: string) => void}} options
 * @returns {Promise<{matchId: string, bots: B[], states: MatchState[],
 *   summary: Record<string, any>, standings: Standing[]}>}
 */
export async function playSeats(client, matchId, tokens, { game, bot, onSeated }) {
  if (tokens.length === 0) throw new RangeError("give at least one seat's token");
  const wanted = gameInfo(game).name;
  /** @type {Session[]} */
  const sessions = [];
  for (const token of tokens) {
    const session = await client.takeSeat(matchId, token);
    if (session.game !== wanted) {
      throw new TypeError(`match ${matchId} is a game of ${session.game}, not of ${wanted}`);
    }
    if (sessions.some((s) => s.seat === session.seat)) {
      throw new RangeError(`two of the tokens hold seat ${session.seat}`);
    }
    sessions.push(session);
  }
  const bots = sessions.map((session, i) => bot(session, i));
  onSeated?.(matchId);
  const states = await Promise.all(bots.map((b) => b.run()));
  const summary = newestSummary(states);
  return { matchId, bots, states, summary, standings: standingsOf(summary) };
}
