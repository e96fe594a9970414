// A Tribes bot that plays from its watch stream alone, and a table of bots.
//
// Every watched event carries the seat's state after it, with the seat's legal actions
// (`state.tribes.legal`): the spaces it may lift, and each totem it may place with its
// destinations, already narrowed by the die (TR-5.2) and by a revealed line (TR-3.2). The
// bot never calls GetMatch and never re-implements those rules; it only chooses among what
// it is offered, looking at the visible tops (nobody sees under a stack, TR-6.1):
//
// 1. a place that visibly wins the round: after it, a line of three of its own tribe's
//    totems (TR-3.1), and no opponent's line revealed by its lift left intact (TR-3.3);
//    such a move names a badge the seat lacks (TR-3.4);
// 2. otherwise any move offered, at random: a totem to move first (each totem offered to
//    place, and each top offered to lift, alike), then one of its destinations (a lift's
//    place follows once the lifted totem's destinations are offered).
//
// A command the rules refuse (FAILED_PRECONDITION: the turn timer moved first, say) is not
// sent again until the match has changed.
import { TableBot, playNewTable, seeded, tableNames } from './lib/table.js';

/** Default delay before each command, after seeing the move: [low, high] milliseconds. */
export const DEFAULT_THINK_MS = Object.freeze([5, 20]);
/** Transient failures of commands in a row (server unavailable) before a bot gives up. */
/** A space's top as the bot reads it: a seat (a tribe's totem), SPECIAL, or null (empty). */
const SPECIAL = -1;

/**
 * @typedef {import('./lib/session.js').Session} Session
 * @typedef {import('./lib/client.js').Client} Client
 * @typedef {import('./lib/messages.js').MatchState} MatchState
 * @typedef {import('./lib/messages.js').MatchEvent} MatchEvent
 * @typedef {Record<string, any>} Message
 *
 * @typedef {{kind: 'lift', space: number, wins: false}
 *   | {kind: 'place', option: Message, destination: number, wins: boolean}} Move
 *
 * @typedef {object} TribesBotOptions
 * @property {readonly number[]} [thinkMs] [low, high] of the delay before each command
 * @property {() => number} [random] uniform in [0, 1) (default Math.random; see seeded())
 */

/** @type {Map<number, number[][]>} */
const linesBySize = new Map();

/**
 * Every three consecutive spaces in a row, a column or a diagonal of a board of side
 * `size` (TR-3.1): the board's geometry, which the bot needs to see a line.
 * @param {number} size
 * @returns {number[][]}
 */
export function lines(size) {
  let found = linesBySize.get(size);
  if (found === undefined) {
    found = [];
    for (let row = 0; row < size; row += 1) {
      for (let col = 0; col < size; col += 1) {
        for (const [dr, dc] of [[0, 1], [1, 0], [1, 1], [1, -1]]) {
          const cells = [0, 1, 2].map((k) => [row + k * dr, col + k * dc]);
          if (cells.every(([r, c]) => r >= 0 && r < size && c >= 0 && c < size)) {
            found.push(cells.map(([r, c]) => r * size + c));
          }
        }
      }
    }
    linesBySize.set(size, found);
  }
  return found;
}

/**
 * Whose totem a totem is: its seat for a tribe's, SPECIAL for the Doom and the Mini.
 * @param {Message} totem a `TribesTotem`
 * @returns {number}
 */
function ownerOf(totem) {
  return totem.kind === 'TRIBES_TOTEM_KIND_TRIBE' ? totem.seat : SPECIAL;
}

/**
 * The visible top of every space: a seat, SPECIAL, or null when empty.
 * @param {Message} tribes a `TribesState`
 * @returns {(number | null)[]}
 */
export function topOwners(tribes) {
  return tribes.spaces.map((/** @type {Message} */ space) =>
    space.top ? ownerOf(space.top) : null,
  );
}

/**
 * Whether placing `totem` on `destination` visibly wins the round for `seat`: a line of
 * its own after the move, and no line revealed by this turn's lift left intact (an
 * opponent's revealed line wins first, TR-3.3).
 * @param {Message} tribes a `TribesState`
 * @param {number} seat
 * @param {Message} totem
 * @param {number} destination
 */
export function wins(tribes, seat, totem, destination) {
  const board = topOwners(tribes);
  board[destination] = ownerOf(totem);
  for (const line of tribes.lifted?.revealed_lines ?? []) {
    /** @type {(number | null)[]} */
    const owners = line.spaces.map((/** @type {number} */ s) => board[s]);
    const [first] = owners;
    const intact = first !== null && first !== SPECIAL && owners.every((o) => o === first);
    if (intact && first !== seat) return false;
  }
  return lines(tribes.board_size).some((line) => line.every((s) => board[s] === seat));
}

/**
 * Every move the seat's legal actions offer now: each lift, and each place of each
 * totem on each of its destinations, marked when it visibly wins.
 * @param {Message} tribes a player's `TribesState`
 * @param {number} seat
 * @returns {Move[]}
 */
export function legalMoves(tribes, seat) {
  const legal = tribes.legal;
  if (!legal) return [];
  /** @type {Move[]} */
  const moves = [];
  for (const option of legal.places) {
    for (const destination of option.destinations) {
      moves.push({
        kind: 'place',
        option,
        destination,
        wins: wins(tribes, seat, option.totem, destination),
      });
    }
  }
  for (const space of legal.lifts) moves.push({ kind: 'lift', space, wins: false });
  return moves;
}

/**
 * The bot's move: a visibly winning place if there is one, else any legal move (a totem
 * at random, lifts and places alike, then one of its destinations); null when the legal
 * actions offer none (not the seat's turn).
 * @param {Message} tribes a player's `TribesState`
 * @param {number} seat
 * @param {() => number} [random]
 * @returns {Move | null}
 */
export function chooseMove(tribes, seat, random = Math.random) {
  const moves = legalMoves(tribes, seat);
  /** @template T @param {T[]} items @returns {T} */
  const pick = (items) => items[Math.floor(random() * items.length)];
  const winning = moves.filter((move) => move.wins);
  if (winning.length > 0) return pick(winning);
  if (moves.length === 0) return null;
  /** @type {Map<unknown, Move[]>} the moves of each totem: a place option's, or a lift */
  const byTotem = new Map();
  for (const move of moves) {
    const key = move.kind === 'lift' ? move : move.option;
    byTotem.set(key, [...(byTotem.get(key) ?? []), move]);
  }
  return pick(pick([...byTotem.values()]));
}

/** What one bot did and what happened to it, counted from the match's events. */
export class TribesBotStats {
  moves = 0; // places sent by the bot
  lifts = 0; // lifts sent by the bot
  timedOut = 0; // moves the turn timer made for this seat
  passes = 0; // turns passed with no legal move (TR-2.5)
  roundsWon = 0;
  feathers = false; // it took the Feathers of Greatness (TR-3.5)
  /** @type {{version: number, command: string, rule: string}[]} commands refused */
  refusals = [];
}

/** Plays one seat of a Tribes match through a player Session. */
export class TribesBot extends TableBot {
  /**
   * @param {Session} session a player's session (with a seat and token)
   * @param {TribesBotOptions} [options]
   */
  constructor(session, options = {}) {
    super(session);
    this.thinkMs = options.thinkMs ?? DEFAULT_THINK_MS;
    const [low, high] = this.thinkMs;
    if (!(low >= 0 && low <= high)) throw new RangeError('delays must satisfy 0 <= low <= high');
    this.random = options.random ?? Math.random;
    this.stats = new TribesBotStats();
    /** The version at which a command was refused: nothing is sent until it changes. */
    /** @type {number | null} */
    this.blockedAt = null;
  }

  /**
   * The move to make, after a think; none while a refused one's version stands.
   * @param {MatchState} state
   * @returns {{delayMs: number, act: () => Promise<void>} | null}
   */
  nextAction(state) {
    if (!state.tribes?.legal || state.summary.version === this.blockedAt) return null;
    const move = chooseMove(state.tribes, this.seat, this.random);
    if (move === null) return null;
    const [low, high] = this.thinkMs;
    return { delayMs: low + (high - low) * this.random(), act: () => this.take(move, state) };
  }

  /**
   * Send a move. A refusal by the rules is noted, and nothing is sent again until the
   * match changes; a transient failure (the server restarting) is retried, for about two
   * minutes of the server's absence (lib/reconnect.js); anything else stops the bot.
   * @param {Move} move
   * @param {MatchState} state the state it was chosen from
   */
  async take(move, state) {
    const version = state.summary.version;
    const sent = await this.send(
      () =>
        move.kind === 'lift'
          ? this.session.lift(move.space)
          : this.session.placeOption(move.option, move.destination, {
              badge: move.wins ? this.badge(state) : null,
            }),
      (error) => {
        this.stats.refusals.push({ version, command: move.kind, rule: error.rule });
        this.blockedAt = version;
      },
    );
    if (sent !== 'accepted') return;
    if (move.kind === 'lift') this.stats.lifts += 1;
    else this.stats.moves += 1;
  }

  /**
   * A badge to name with a winning move: one the seat lacks, at random (none when it
   * holds all four: the win takes the Feathers).
   * @param {MatchState} state
   * @returns {string | null}
   */
  badge(state) {
    const badges = state.tribes.legal.badges;
    return badges.length > 0 ? badges[Math.floor(this.random() * badges.length)] : null;
  }

  /** @param {MatchEvent} event */
  count(event) {
    if (event.event !== 'tribes') return;
    const body = event.tribes;
    const me = this.seat;
    if (body.event === 'placed' && body.placed.seat === me) {
      if (body.placed.cause === 'TRIBES_MOVE_CAUSE_TIMEOUT') this.stats.timedOut += 1;
    } else if (body.event === 'passed' && body.passed.seat === me) {
      this.stats.passes += 1;
    } else if (body.event === 'round_won' && body.round_won.winner === me) {
      this.stats.roundsWon += 1;
      this.stats.feathers = body.round_won.feathers;
    }
  }
}

/** @typedef {import('./lib/table.js').TableResult<TribesBot>} TribesTableResult */

/**
 * Create a Tribes match for `players` seats, seat one bot in each (each adds fresh
 * entropy to the seed), and play it to the Feathers of Greatness. The match starts by
 * itself when the last bot joins. `seed` makes the bots' delays and choices reproducible
 * (not the server's draws).
 * @param {Client} client
 * @param {number} players 2 to 4
 * @param {TribesBotOptions & {extended?: boolean, boardSize?: number,
 *   turnTimeoutMs?: number, roundMoveLimit?: number, seed?: number, names?: string[],
 *   onSeated?: (matchId: string) => void}} [options]
 * @returns {Promise<TribesTableResult>}
 */
export async function playTribesTable(client, players, options = {}) {
  if (!(players >= 2 && players <= 4)) throw new RangeError('Tribes is for 2 to 4 players');
  const names = tableNames(players, options.names);
  const matchOptions = {
    game: 'tribes',
    maxPlayers: players,
    extended: options.extended,
    boardSize: options.boardSize,
    turnTimeoutMs: options.turnTimeoutMs,
    roundMoveLimit: options.roundMoveLimit,
  };
  return playNewTable(client, matchOptions, names, {
    bot: (session, i) => {
      const random = options.seed === undefined ? options.random : seeded(options.seed + i);
      return new TribesBot(session, { thinkMs: options.thinkMs, random });
    },
    onSeated: options.onSeated,
  });
}
