// An entrant of a tournament played by a bot: each round it takes the entrant's seat at
// their table (TournamentService.TakeSeat, with the entrant token) and plays the table's
// match with the game's bot (bot.js, tribes-bot.js, village-bot.js), the entrant token
// acting as the seat's token there, until the tournament ends.
//
// It follows the tournament from its WatchTournament stream (lib/tournament.js): a round
// starting (RoundStarted) or a ruling (Ruled: a replay makes a fork the table's match) is
// when to ask for a seat; the server says which match and seat it is. A match already
// played is not played again; a refused TakeSeat (FAILED_PRECONDITION: a bye, a
// withdrawal, no round under way) means nothing to play now. It ends with the stream,
// after the tournament's final event.
//
// From the command line, against a running server, one bot per entrant token given:
//   node tournament-bot.js --address 127.0.0.1:50051 --tournament ID --token TOKEN ...
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { JungleSpeedBot } from './bot.js';
import { joinValues } from './lib/args.js';
import { connect } from './lib/client.js';
import { TotemError } from './lib/errors.js';
import { gameInfo, gameOfSummary } from './lib/games.js';
import { PATIENCE, pause } from './lib/reconnect.js';
import { Session } from './lib/session.js';
import { RESUMABLE_CODES } from './lib/streams.js';
import { connectTournaments } from './lib/tournament.js';
import { TribesBot } from './tribes-bot.js';
import { VillageBot } from './village-bot.js';

/**
 * @typedef {import('./lib/client.js').Client} Client
 * @typedef {import('./lib/client.js').ClientOptions} ClientOptions
 * @typedef {import('./lib/table.js').TableBot} TableBot
 * @typedef {import('./lib/tournament.js').TournamentClient} TournamentClient
 * @typedef {import('./lib/messages.js').MatchState} MatchState
 *
 * @typedef {object} Seat a seat taken for a round (TakeSeatResponse)
 * @property {string} match_id
 * @property {number} seat
 * @property {number} round
 * @property {number} table
 * @property {number} version
 *
 * @typedef {object} RoundInfo the round as its RoundStarted event recorded it
 * @property {number} round its number
 * @property {string | null} name the entrant's name, when known
 * @property {Record<string, any> | null} table the entrant's table in it (`{table, seats,
 *   reason, match_id}`), when the name is known and they have one
 *
 * @typedef {object} PlayedTable a match the bot played for the entrant
 * @property {number} round
 * @property {number} table
 * @property {string} matchId
 * @property {number} seat
 * @property {TableBot} bot
 * @property {MatchState} state the bot's last state, from its stream
 *
 * @typedef {object} TournamentPlay what `playTournament` did
 * @property {string} tournamentId
 * @property {string | null} name the entrant's name (given, or learnt from a table)
 * @property {PlayedTable[]} tables in the order played
 * @property {number[]} byes rounds in which the entrant had a bye (as the rounds'
 *   RoundStarted events name them; known only with the name)
 * @property {number | null} withdrawnFrom the first round not played after a withdrawal
 * @property {Record<string, any> | null} ended the fields of the final event
 *   (TournamentEnded: standings, matches, rulings, seed), null if stopped before it
 *
 * @typedef {object} PlayTournamentOptions
 * @property {string} [address] the server, when no `client` and `tournaments` are given
 * @property {string} tournamentId
 * @property {string} entrantToken the token AddEntrant returned for the entrant
 * @property {string} [game] the tournament's game; asked of the server when unset
 * @property {string} [name] the entrant's name: with it, a round where the entrant has a
 *   bye is known from its RoundStarted event (else TakeSeat's refusal says so)
 * @property {Client} [client] the MatchService client to play through (default: one on
 *   `address`, closed at the end)
 * @property {TournamentClient} [tournaments] the TournamentService client (default: one
 *   on `address`, closed at the end)
 * @property {ClientOptions} [clientOptions] for the clients made on `address`
 * @property {(session: Session, seat: Seat) => TableBot} [bot] the bot of a seat
 *   (default: the game's bot, with `botOptions`)
 * @property {Record<string, any>} [botOptions] options of the game's bot
 * @property {(round: RoundInfo) => void | Promise<void>} [beforeSeat] awaited before
 *   taking a seat for a round: whatever should happen first (the match starts once every
 *   seat is taken)
 * @property {(table: PlayedTable) => void} [onTable] called after each match played
 * @property {AbortSignal} [signal] stops following the tournament (a match under way is
 *   played to its end first)
 */

/**
 * The bot of a game, for a seat.
 * @param {string} game
 * @param {Session} session
 * @param {Record<string, any>} [options]
 * @returns {TableBot}
 */
export function gameBot(game, session, options = {}) {
  const name = gameInfo(game).name;
  if (name === 'tribes') return new TribesBot(session, options);
  if (name === 'village') return new VillageBot(session, options);
  return new JungleSpeedBot(session, options);
}

/**
 * Play an entrant's tables of a tournament with a bot, round after round, until the
 * tournament ends (its WatchTournament stream ends after the final event). Resolves to
 * what was played (TournamentPlay); rejects with the server's TotemError for a token
 * that is not an entrant's, or a bot's failure.
 * @param {PlayTournamentOptions} options
 * @returns {Promise<TournamentPlay>}
 */
export async function playTournament(options) {
  const { tournamentId, entrantToken } = options;
  if (!entrantToken) throw new TypeError("playTournament needs the entrant's token");
  if (!options.address && !(options.client && options.tournaments)) {
    throw new TypeError('give the server address, or both clients');
  }
  const address = /** @type {string} */ (options.address);
  const client = options.client ?? connect(address, options.clientOptions);
  const tournaments = options.tournaments ?? connectTournaments(address, options.clientOptions);
  try {
    let game = options.game ? gameInfo(options.game).name : null;
    if (game === null) {
      const found = gameOfSummary((await tournaments.getTournament(tournamentId)).summary);
      if (found === null) throw new TypeError(`tournament ${tournamentId} is of a game this client does not know`);
      game = found;
    }
    const entrant = new Entrant({ ...options, game, client, tournaments });
    return await entrant.follow();
  } finally {
    if (!options.client) client.close();
    if (!options.tournaments) tournaments.close();
  }
}

/** One entrant's life in a tournament: its stream, its seats, its matches. */
class Entrant {
  /**
   * @param {PlayTournamentOptions & {game: string, client: Client,
   *   tournaments: TournamentClient}} options
   */
  constructor(options) {
    this.options = options;
    this.game = options.game;
    this.client = options.client;
    this.tournaments = options.tournaments;
    /** @type {TournamentPlay} */
    this.result = {
      tournamentId: options.tournamentId,
      name: options.name ?? null,
      tables: [],
      byes: [],
      withdrawnFrom: null,
      ended: null,
    };
    /** Matches already played (a TakeSeat answering one again is nothing new). */
    this.played = new Set();
    /** Each round's RoundStarted fields, by number. @type {Map<number, Record<string, any>>} */
    this.rounds = new Map();
  }

  /** @returns {Promise<TournamentPlay>} */
  async follow() {
    const stream = this.tournaments.watchTournament(this.options.tournamentId, {
      maxFailures: PATIENCE,
      signal: this.options.signal,
    });
    try {
      for await (const event of stream) {
        const fields = event.fields;
        if (event.name === 'RoundStarted') {
          this.rounds.set(fields.round, fields);
          await this.roundStarted(fields);
        } else if (event.name === 'Ruled' && fields.kind === 'replay') {
          // A replay makes a fork the table's match: its seats are taken again.
          if (this.result.withdrawnFrom === null) await this.playSeat(fields.round);
        } else if (event.name === 'Withdrew' && fields.entrant === this.result.name) {
          this.result.withdrawnFrom = fields.first_missed ?? fields.round ?? null;
        } else if (event.name === 'TournamentEnded') {
          this.result.ended = fields;
        }
      }
    } finally {
      stream.close();
    }
    return this.result;
  }

  /**
   * A round started: sit at its table and play, unless the entrant has a bye or has
   * withdrawn.
   * @param {Record<string, any>} fields the RoundStarted event's
   */
  async roundStarted(fields) {
    if (this.result.withdrawnFrom !== null) return;
    const name = this.result.name;
    if (name !== null && (fields.byes ?? []).some((/** @type {any} */ b) => b.entrant === name)) {
      this.result.byes.push(fields.round);
      return;
    }
    await this.playSeat(fields.round);
  }

  /**
   * Take the entrant's seat in the round under way and play its match, if it is one not
   * played yet.
   * @param {number} round the round the event was about
   */
  async playSeat(round) {
    const name = this.result.name;
    const table =
      name === null
        ? null
        : ((this.rounds.get(round)?.tables ?? []).find((/** @type {any} */ t) =>
            (t.seats ?? []).includes(name),
          ) ?? null);
    await this.options.beforeSeat?.({ round, name, table });
    const seat = await this.takeSeat();
    if (seat === null || this.played.has(seat.match_id)) return;
    this.played.add(seat.match_id);
    const session = new Session(this.client, seat.match_id, {
      token: this.options.entrantToken,
      seat: seat.seat,
      name: this.result.name ?? '',
      version: seat.version,
      game: this.game,
    });
    if (this.result.name === null) {
      this.result.name = await this.nameAt(session, seat);
      session.name = this.result.name ?? '';
    }
    const bot = this.options.bot?.(session, seat) ?? gameBot(this.game, session, this.options.botOptions);
    const state = await bot.run();
    /** @type {PlayedTable} */
    const played = {
      round: seat.round,
      table: seat.table,
      matchId: seat.match_id,
      seat: seat.seat,
      bot,
      state,
    };
    this.result.tables.push(played);
    this.options.onTable?.(played);
  }

  /**
   * TakeSeat with the entrant token: the seat, or null when there is none to take now (a
   * refusal by the rules: a bye, a withdrawal, no round under way). A transient failure
   * is tried again, for about two minutes of the server's absence.
   * @returns {Promise<Seat | null>}
   */
  async takeSeat() {
    for (let failures = 1; ; failures += 1) {
      try {
        return await this.tournaments.takeSeat(this.options.tournamentId, this.options.entrantToken);
      } catch (error) {
        if (!(error instanceof TotemError)) throw error;
        if (error.code === 'FAILED_PRECONDITION') return null;
        if (!RESUMABLE_CODES.has(error.code) || failures > PATIENCE) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause(failures, error)));
      }
    }
  }

  /**
   * The entrant's name, learnt from their seat: the name the match gives the seat (the
   * server seats an entrant in their own name, cut to a player name's length), as the
   * round's table lists it. The server seats a table's entrants together in the table's
   * seat order, those absent at the start deadline left out, so a seat's number is an
   * entrant's place among those present, not always their place in the table.
   * @param {Session} session the seat's
   * @param {Seat} seat
   * @returns {Promise<string | null>}
   */
  async nameAt(session, seat) {
    const view = await session.get();
    const player = view.summary.players.find((/** @type {any} */ p) => p.seat === seat.seat);
    if (!player) return null;
    /** @type {string[]} */
    const seats =
      (this.rounds.get(seat.round)?.tables ?? []).find(
        (/** @type {any} */ t) => t.table === seat.table,
      )?.seats ?? [];
    return (
      seats.find((name) => name === player.name) ??
      seats.find((name) => name.startsWith(player.name)) ??
      player.name
    );
  }
}

async function main() {
  const options = /** @type {const} */ ({
    address: { type: 'string', default: process.env.TOTEM_ADDRESS ?? '127.0.0.1:50051' },
    tournament: { type: 'string' },
    token: { type: 'string', multiple: true },
    help: { type: 'boolean', default: false },
  });
  const args = joinValues(process.argv.slice(2), ['address', 'tournament', 'token']);
  const { values } = parseArgs({ args, options });
  const tokens = values.token ?? [];
  if (values.help || !values.tournament || tokens.length === 0) {
    console.log(
      'usage: node tournament-bot.js [--address HOST:PORT] --tournament ID --token TOKEN ...\n' +
        '  one bot per entrant token (AddEntrant returns one per entrant); each takes its\n' +
        "  entrant's seat every round and plays the table's match, until the tournament ends",
    );
    if (!values.help) process.exitCode = 2;
    return;
  }
  const address = values.address;
  const tournamentId = values.tournament;
  const client = connect(address);
  const tournaments = connectTournaments(address);
  try {
    await tournaments.waitReady(5000);
    const plays = await Promise.all(
      tokens.map((entrantToken) =>
        playTournament({
          tournamentId,
          entrantToken,
          client,
          tournaments,
          onTable: (t) =>
            console.error(
              `round ${t.round}, table ${t.table}: match ${t.matchId} ended (seat ${t.seat})`,
            ),
        }),
      ),
    );
    for (const play of plays) {
      const byes = play.byes.length > 0 ? `, byes in rounds ${play.byes.join(', ')}` : '';
      console.log(`${play.name ?? '?'}: ${play.tables.length} match(es) played${byes}`);
    }
    for (const row of plays[0].ended?.standings ?? []) {
      console.log(`  ${String(row.rank).padStart(2)}. ${row.entrant} ${row.points}`);
    }
  } finally {
    client.close();
    tournaments.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(String(error));
    process.exitCode = 1;
  });
}
