// A Jungle Speed bot that plays from its watch stream alone, and a table of bots.
//
// Every watched event carries the seat's state after it, with the seat's legal actions
// (`state.jungle_speed.legal`), so the bot never calls GetMatch and never re-implements
// the rules. It grabs the totem when its legal actions offer a grab (an open duel it is
// in, or an inward-arrows race: JS-4.2, JS-6.1), at most once per race, and reveals when
// they offer a reveal (JS-3.1), each after a random, human-like delay and not before
// `reveal_not_before_ms` (JS-3.4). A command the rules refuse (FAILED_PRECONDITION: the
// state moved on, someone was faster) is not sent again until the match has changed.
//
// One exception to "grab only when a grab is offered": a table can go round for ever.
// When nobody can reveal, the server turns every face-up pile over, shuffled
// (PilesRecycled); if no card of one seat can ever match a card of another, no shuffle
// opens a race. A bot that sees a whole round between two recycles with no race grabs
// once, on purpose, a few reveals into the next one: a wrong grab (JS-5.2), a legal move
// whose penalty gathers the piles. `breakStalls: false` turns this off.
//
// Run a table from the command line: node bot.js --players 4 --address 127.0.0.1:50051
// (`--game tribes` for a table of Tribes bots, tribes-bot.js; `--game village` for Village,
// village-bot.js); `--join MATCH --token TOKEN ...` seats the bots in the seats those
// tokens hold in an existing match (a fork's) instead.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { joinValues } from './lib/args.js';
import { connect } from './lib/client.js';
import { gameInfo } from './lib/games.js';
import {
  MAX_TRANSIENT_FAILURES,
  TableBot,
  playNewTable,
  playSeats,
  seeded,
  tableNames,
} from './lib/table.js';
import { TribesBot, playTribesTable } from './tribes-bot.js';
import { VillageBot, playVillageTable } from './village-bot.js';

export { MAX_TRANSIENT_FAILURES, seeded };

/** Default delay before grabbing, after seeing a race open: [low, high] milliseconds. */
export const DEFAULT_REACTION_MS = Object.freeze([20, 60]);
/** Default delay before revealing, after seeing the reveal offered. */
export const DEFAULT_REVEAL_DELAY_MS = Object.freeze([10, 40]);
/** How many reveals into a round that would repeat for ever a bot grabs: [low, high]. */
const STALL_BREAK_AFTER_REVEALS = [3, 12];

/**
 * @typedef {import('./lib/session.js').Session} Session
 * @typedef {import('./lib/client.js').Client} Client
 * @typedef {import('./lib/messages.js').MatchState} MatchState
 * @typedef {import('./lib/messages.js').MatchEvent} MatchEvent
 *
 * @typedef {object} BotOptions
 * @property {readonly number[]} [reactionMs] [low, high] of the grab delay
 * @property {readonly number[]} [revealDelayMs] [low, high] of the reveal delay
 * @property {() => number} [random] uniform in [0, 1) (default Math.random; see seeded())
 * @property {boolean} [breakStalls] default true
 */

/** What one bot did and what happened to it, counted from the match's events. */
export class BotStats {
  reveals = 0; // on its turn
  timedOut = 0; // reveals the server made for this seat (JS-3.4)
  grabs = 0;
  duelsWon = 0;
  duelsLost = 0;
  arrowsWon = 0;
  wrongGrabs = 0;
  lateGrabs = 0;
  stallBreaks = 0;
  /** @type {{version: number, command: string, rule: string}[]} commands refused */
  refusals = [];
}

/** Plays one seat of a Jungle Speed match through a player Session. */
export class JungleSpeedBot extends TableBot {
  /**
   * @param {Session} session a player's session (with a seat and token)
   * @param {BotOptions} [options]
   */
  constructor(session, options = {}) {
    super(session);
    this.reactionMs = options.reactionMs ?? DEFAULT_REACTION_MS;
    this.revealDelayMs = options.revealDelayMs ?? DEFAULT_REVEAL_DELAY_MS;
    for (const [low, high] of [this.reactionMs, this.revealDelayMs]) {
      if (!(low >= 0 && low <= high)) throw new RangeError('delays must satisfy 0 <= low <= high');
    }
    this.random = options.random ?? Math.random;
    this.breakStalls = options.breakStalls ?? true;
    this.stats = new BotStats();
    // Races seen, by key: when the bot will grab for them (performance.now() ms).
    /** @type {Map<string, number>} */
    this.raceDue = new Map();
    /** @type {Set<string>} */
    this.grabbed = new Set();
    /** @type {number | null} */
    this.revealDue = null;
    /** @type {number | null} */
    this.revealBlockedAt = null;
    // Stall detection (see the top of this file).
    this.recycled = false;
    this.grabSinceRecycle = false;
    /** @type {number | null} */
    this.stallCountdown = null;
  }

  /**
   * A grab for an open race once its reaction delay is over, else a stall break, else a
   * reveal once offered and allowed (see `choose`).
   * @param {MatchState} state
   * @returns {{delayMs: number, act: () => Promise<void>} | null}
   */
  nextAction(state) {
    if (!state.jungle_speed?.legal) return null;
    const now = performance.now();
    const { action, due } = this.choose(state, now);
    if (action === null) return null;
    return { delayMs: due - now, act: () => this.take(action, state) };
  }

  /**
   * The next action and when (performance.now() ms) to take it.
   * @param {MatchState} state
   * @param {number} now
   * @returns {{action: 'grab' | 'break stall' | 'reveal' | null, due: number}}
   */
  choose(state, now) {
    const legal = state.jungle_speed.legal;
    const races = this.races(state.jungle_speed);
    for (const key of this.raceDue.keys()) if (!races.includes(key)) this.raceDue.delete(key);
    const open = races.filter((key) => !this.grabbed.has(key));
    for (const key of open) {
      if (!this.raceDue.has(key)) this.raceDue.set(key, now + this.delay(this.reactionMs));
    }
    if (open.length > 0) {
      return { action: 'grab', due: Math.min(...open.map((key) => this.raceDue.get(key) ?? now)) };
    }
    if (this.stallCountdown === 0) return { action: 'break stall', due: now };
    if (!legal.reveal) {
      this.revealDue = null;
      return { action: null, due: 0 };
    }
    if (this.revealBlockedAt === state.summary.version) return { action: null, due: 0 };
    this.revealDue ??= now + this.delay(this.revealDelayMs);
    // The minimum interval is a wall-clock time (JS-3.4); timers are monotonic.
    const notBefore = now + Math.max(0, legal.reveal_not_before_ms - Date.now());
    return { action: 'reveal', due: Math.max(this.revealDue, notBefore) };
  }

  /**
   * The races the legal actions offer a grab for, each named by what is visible (a race
   * stays the same race while its cards stay up). Only the server's default: one grab
   * takes the totem.
   * @param {Record<string, any>} jungleSpeed
   * @returns {string[]}
   */
  races(jungleSpeed) {
    /** @type {Map<number, number>} */
    const tops = new Map();
    for (const seat of jungleSpeed.seats) if (seat.top) tops.set(seat.seat, seat.top.id);
    return jungleSpeed.legal.grabs.slice(0, 1).map((/** @type {any} */ option) => {
      const seats = [...new Set([this.seat, ...option.opponents])].sort((x, y) => x - y);
      return JSON.stringify([option.resolves, seats, seats.map((s) => tops.get(s) ?? null)]);
    });
  }

  /** @param {readonly number[]} bounds */
  delay([low, high]) {
    return low + (high - low) * this.random();
  }

  /**
   * @param {'grab' | 'break stall' | 'reveal'} action
   * @param {MatchState} state the state it was decided from
   */
  async take(action, state) {
    const version = state.summary.version;
    if (action === 'reveal') {
      this.revealDue = null;
      const sent = await this.send(
        () => this.session.reveal(),
        (error) => this.refused('reveal', version, error),
      );
      // Refused by the rules: not again at this version. After a transient failure (the
      // server was away) the same reveal is tried again.
      if (sent === 'refused') this.revealBlockedAt = version;
      return;
    }
    if (action === 'break stall') {
      this.stallCountdown = null;
      this.stats.stallBreaks += 1;
    }
    const races = action === 'grab' ? this.races(state.jungle_speed) : [];
    for (const key of races) this.grabbed.add(key);
    this.stats.grabs += 1;
    const sent = await this.send(
      () => this.session.grab(),
      (error) => this.refused('grab', version, error),
    );
    // The server was away (a restart): the race is still this bot's to grab for.
    if (sent === 'transient') for (const key of races) this.grabbed.delete(key);
  }

  /**
   * @param {string} command
   * @param {number} version
   * @param {import('./lib/errors.js').TotemError} error
   */
  refused(command, version, error) {
    this.stats.refusals.push({ version, command, rule: error.rule });
  }

  /** @param {MatchEvent} event */
  count(event) {
    if (event.event !== 'jungle_speed') return;
    const body = event.jungle_speed;
    const kind = body.event;
    const me = this.seat;
    if (kind === 'revealed' && body.revealed.seat === me) {
      if (body.revealed.cause === 'REVEAL_CAUSE_TIMEOUT') this.stats.timedOut += 1;
      else this.stats.reveals += 1;
    } else if (kind === 'duel_won') {
      if (body.duel_won.winner === me) this.stats.duelsWon += 1;
      else if (body.duel_won.losers.includes(me)) this.stats.duelsLost += 1;
    } else if (kind === 'arrows_won' && body.arrows_won.winner === me) {
      this.stats.arrowsWon += 1;
    } else if (kind === 'wrong_grab' && body.wrong_grab.seat === me) {
      this.stats.wrongGrabs += 1;
    } else if (kind === 'late_grab' && body.late_grab.seat === me) {
      this.stats.lateGrabs += 1;
    }
    this.watchForStalls(kind);
  }

  /**
   * Notice a round with no race between two recycles (see the top of this file).
   * @param {string} kind
   */
  watchForStalls(kind) {
    if (kind === 'duel_won' || kind === 'arrows_won' || kind === 'wrong_grab') {
      this.grabSinceRecycle = true;
      this.stallCountdown = null;
    } else if (kind === 'piles_recycled') {
      if (this.recycled && !this.grabSinceRecycle && this.breakStalls) {
        const [low, high] = STALL_BREAK_AFTER_REVEALS;
        this.stallCountdown = low + Math.floor(this.random() * (high - low + 1));
      }
      this.recycled = true;
      this.grabSinceRecycle = false;
    } else if ((kind === 'revealed' || kind === 'outward_reveal') && this.stallCountdown) {
      this.stallCountdown -= 1;
    }
  }
}

/**
 * @typedef {import('./lib/table.js').TableResult<JungleSpeedBot>} TableResult
 * @typedef {import('./lib/table.js').Standing} Standing
 */

/**
 * Create a match for `players` seats, seat one bot in each (each adds fresh entropy to
 * the seed), and play it to the end. The match starts by itself when the last bot joins.
 * `seed` makes the bots' delays reproducible (not the deal).
 * @param {Client} client
 * @param {number} players 2 to 10
 * @param {BotOptions & {variant?: 'ES' | 'RU', turnTimeoutMs?: number, seed?: number,
 *   names?: string[], onSeated?: (matchId: string) => void}} [options]
 * @returns {Promise<TableResult>}
 */
export async function playTable(client, players, options = {}) {
  if (!(players >= 2 && players <= 10)) throw new RangeError('Jungle Speed is for 2 to 10 players');
  const names = tableNames(players, options.names);
  const matchOptions = {
    variant: options.variant ?? 'ES',
    maxPlayers: players,
    turnTimeoutMs: options.turnTimeoutMs,
  };
  return playNewTable(client, matchOptions, names, {
    bot: (session, i) => {
      const random = options.seed === undefined ? options.random : seeded(options.seed + i);
      return new JungleSpeedBot(session, { ...options, random });
    },
    onSeated: options.onSeated,
  });
}

/** @param {string | undefined} text */
const optionalNumber = (text) => (text === undefined ? undefined : Number(text));

async function main() {
  const options = /** @type {const} */ ({
    address: { type: 'string', default: process.env.TOTEM_ADDRESS ?? '127.0.0.1:50051' },
    'organiser-token': { type: 'string', default: process.env.TOTEM_ORGANISER_TOKEN },
    game: { type: 'string', default: 'jungle_speed' },
    players: { type: 'string' },
    variant: { type: 'string', default: 'ES' },
    extended: { type: 'boolean', default: false },
    'board-size': { type: 'string' },
    'turn-timeout-ms': { type: 'string' },
    seed: { type: 'string' },
    join: { type: 'string' },
    token: { type: 'string', multiple: true },
    help: { type: 'boolean', default: false },
  });
  const strings = Object.keys(options).filter(
    (name) => options[/** @type {keyof typeof options} */ (name)].type === 'string',
  );
  const { values } = parseArgs({ args: joinValues(process.argv.slice(2), strings), options });
  if (values.help) {
    console.log(
      'usage: node bot.js [--address HOST:PORT] [--organiser-token TOKEN]\n' +
        '  [--game jungle_speed|tribes|village] [--players N]\n' +
        '  --organiser-token (env TOTEM_ORGANISER_TOKEN): needed to create the match unless\n' +
        '  the server lets anyone create matches\n' +
        '  Jungle Speed: [--variant ES|RU]; Tribes: [--extended] [--board-size N]\n' +
        '  [--turn-timeout-ms MS] [--seed N]\n' +
        '  or, in an existing match (a fork): --game GAME --join MATCH --token TOKEN ...\n' +
        '  one bot in each seat whose token is given (totem-replay fork prints one per\n' +
        '  seat; the server says which seat a token holds)',
    );
    return;
  }
  const tokens = values.token ?? [];
  if (tokens.length > 0 && !values.join) throw new Error('--token goes with --join MATCH');
  if (values.join && tokens.length === 0) {
    throw new Error('--join MATCH takes the seats of the tokens given: add --token TOKEN for each');
  }
  const client = connect(values.address, { organiserToken: values['organiser-token'] });
  try {
    await client.waitReady(5000);
    const game = gameInfo(values.game).name;
    const tribes = game === 'tribes';
    const village = game === 'village';
    const players = Number(values.players ?? (tribes || village ? 2 : 4));
    const common = {
      turnTimeoutMs: optionalNumber(values['turn-timeout-ms']),
      seed: optionalNumber(values.seed),
      onSeated: (/** @type {string} */ id) => console.error(`match id: ${id}`),
    };
    const variant = /** @type {'ES' | 'RU'} */ (values.variant.toUpperCase());
    const timeout = common.turnTimeoutMs;
    const deadlines =
      timeout === undefined
        ? {}
        : Object.fromEntries(
            ['arrange', 'choose', 'place', 'reveal', 'victims', 'youth'].map((k) => [
              `${k}TimeoutMs`,
              timeout,
            ]),
          );
    const seed = optionalNumber(values.seed);
    /** @type {(session: Session, i: number) => TableBot} */
    const seatBot = (session, i) => {
      const random = seed === undefined ? undefined : seeded(seed + i);
      if (village) return new VillageBot(session, { random });
      if (tribes) return new TribesBot(session, { random });
      return new JungleSpeedBot(session, { random });
    };
    const result = values.join
      ? await playSeats(client, values.join, tokens, { game, bot: seatBot, onSeated: common.onSeated })
      : village
      ? await playVillageTable(client, players, {
          matchOptions: deadlines,
          onSeated: common.onSeated,
        })
      : tribes
      ? await playTribesTable(client, players, {
          ...common,
          extended: values.extended,
          boardSize: optionalNumber(values['board-size']),
        })
      : await playTable(client, players, { ...common, variant });
    const reason = result.summary.end_reason.replace('END_REASON_', '').toLowerCase();
    const title = village
      ? 'Village'
      : tribes
      ? `Tribes${result.summary.variant === 'extended' ? ' (extended)' : ''}`
      : `Jungle Speed ${result.summary.variant}`;
    console.log(
      `${title}, ${result.bots.length} bots: match ended (${reason}) after ` +
        `${result.summary.version} events`,
    );
    for (const { place, name, seat } of result.standings) {
      console.log(`  ${String(place).padStart(2)}. ${name} (seat ${seat})`);
    }
  } finally {
    client.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(String(error));
    process.exitCode = 1;
  });
}
