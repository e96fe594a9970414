// A client of the TournamentService (totem.v1) over @grpc/grpc-js, in the manner of
// client.js: one promise-returning method per unary call, bearer tokens as metadata,
// every refusal a TotemError with its rule id (TO-x.y), and WatchTournament as an async
// iterable that resumes by itself from the last version it yielded.
//
// Who calls what (tournament_service.proto): the organiser creates and runs the
// tournament (the client's `organiserToken`); an entrant's token, which AddEntrant
// returns once, takes their seat, files disputes and withdraws; a referee's token, which
// AppointReferee returns once, reads the dispute queue and rules. The rest is public.
import grpc from '@grpc/grpc-js';

import { bearer } from './calls.js';
import { TotemError } from './errors.js';
import { gameInfo } from './games.js';
import { enumValue } from './games/shared.js';
import { loadContract } from './proto.js';
import { ResumableStream } from './streams.js';
import { StubClient } from './stub_client.js';

/**
 * @typedef {import('./messages.js').Message} Message
 * @typedef {import('./client.js').ClientOptions} ClientOptions
 * @typedef {import('./streams.js').ResumeOptions} ResumeOptions
 */

/**
 * Tournament messages as proto-loader decodes them (OBJECT_OPTIONS in proto.js): field
 * names of the .proto file, enums as their names, 64-bit integers as Numbers.
 * @typedef {Message} Tournament `totem.v1.Tournament`: `summary`, the game's options,
 *   `entrants`, `referees`, `rounds`, `rulings`, `standings`, `open_disputes`...
 * @typedef {Message} TournamentRound `totem.v1.TournamentRound`: `number`, `tables`
 *   (each with `seats` by name in seat order, `reason`, `match_id`, `places`...), `byes`
 * @typedef {Message} Standing `totem.v1.Standing`: `rank`, `entrant`, `points` (exact,
 *   as text: "3", "1.5", "7/3"), the tie-breaks, `separated_by`
 * @typedef {Message} Dispute `totem.v1.Dispute`
 * @typedef {Message & {fields: Record<string, any>}} TournamentEvent
 *   `totem.v1.TournamentEvent` (`version`, `name`, `fields_json`, `digest`), with
 *   `fields`, its `fields_json` parsed
 */

/** Pairing formats by short name (TO-2 to TO-4), for `createTournament`. */
export const FORMATS = Object.freeze({
  round_robin: 'TOURNAMENT_FORMAT_ROUND_ROBIN',
  swiss: 'TOURNAMENT_FORMAT_SWISS',
  single_elimination: 'TOURNAMENT_FORMAT_SINGLE_ELIMINATION',
});

/** Tie-breaks by short name (TO-7.2 to TO-7.5), for `createTournament`. */
export const TIE_BREAKS = Object.freeze({
  buchholz: 'TIE_BREAK_BUCHHOLZ',
  median_buchholz: 'TIE_BREAK_MEDIAN_BUCHHOLZ',
  sonneborn_berger: 'TIE_BREAK_SONNEBORN_BERGER',
  head_to_head: 'TIE_BREAK_HEAD_TO_HEAD',
});

/**
 * What a referee decides (TO-10.3): the `Verdict` messages of `rule`.
 */
export const verdicts = Object.freeze({
  /** The result stands: nothing changes. */
  stands: () => ({ stands: {} }),
  /**
   * The table's result is replaced (TO-6.1): every seat's place (1 first; equal places
   * tie), and who forfeits.
   * @param {Record<string, number> | {entrant: string, place: number}[]} places by
   *   entrant name, or as `EntrantPlace`s
   * @param {string[]} [forfeited]
   */
  replace: (places, forfeited = []) => ({
    replace: {
      places: Array.isArray(places)
        ? places.map(({ entrant, place }) => ({ entrant, place }))
        : Object.entries(places).map(([entrant, place]) => ({ entrant, place })),
      forfeited,
    },
  }),
  /**
   * The match is played again from a fork of it at `version` (1 to its final one); the
   * fork becomes the table's match, and its seats are taken again with TakeSeat.
   * @param {number} version
   */
  replay: (version) => ({ replay: { version } }),
  /**
   * Points off an entrant (TO-6.2): a decimal or a fraction ("1", "0.5", "1/2").
   * @param {string} entrant
   * @param {string | number} points
   */
  penalise: (entrant, points) => ({ penalise: { entrant, points: String(points) } }),
});

/**
 * CreateTournament's options. Left undefined, each takes the server's default.
 * @typedef {object} CreateTournamentOptions
 * @property {string} game 'jungle_speed', 'tribes', 'village' (or 'GAME_TRIBES'...)
 * @property {Record<string, any>} [options] the options of every table's match, as
 *   `createMatch` takes them for that game (`{turnTimeoutMs: 500}`); a table's seats are
 *   `tableSize`, whatever they say
 * @property {string} [title] up to 80 printable characters
 * @property {string} format 'round_robin', 'swiss', 'single_elimination' (or the enum
 *   names)
 * @property {number} tableSize seats at each table: 2 to what the game seats
 * @property {number} [rounds] Swiss only (0: as many as a bracket of the field)
 * @property {string[]} [tieBreaks] after points, in order ('buchholz',
 *   'median_buchholz', 'sonneborn_berger', 'head_to_head'); default Buchholz,
 *   Sonneborn-Berger, head-to-head
 * @property {number} [disputeWindowMs] how long after a round's last result disputes
 *   may be filed (unset: the server's default, 600000; 0: no window, the next round may
 *   start at once)
 * @property {number} [noShowMs] after a round starts, an entrant not seated by then
 *   forfeits (TO-9.3; unset: 600000)
 * @property {boolean} [duplicate] every table of a round plays the same luck (TO-12.1)
 * @property {number} [abandonAfterMs] as CreateMatch's (0: the server's default)
 * @property {boolean} [autoRounds] the server starts every round after the first by
 *   itself (TO-9.1)
 */

/**
 * A client of the TournamentService at `address` (`host:port`), over a plaintext channel;
 * the options of `connect` (client.js). `organiserToken` goes with the organiser's calls
 * (create, add entrants, appoint referees, start rounds, end, and a withdrawal of
 * someone else), unless a call is given a token of its own.
 * @param {string} address
 * @param {ClientOptions} [options]
 * @returns {TournamentClient}
 */
export function connectTournaments(address, options = {}) {
  return new TournamentClient(address, options);
}

/** Calls of the TournamentService on one channel. Every failed call rejects with TotemError. */
export class TournamentClient extends StubClient {
  /**
   * @param {string} address
   * @param {ClientOptions} [options]
   */
  constructor(address, options = {}) {
    super(loadContract(options.protosDir).TournamentService, address, options);
  }

  /**
   * The token of an organiser's call: the one given, else the client's organiser token.
   * @param {string | null | undefined} token
   * @returns {string | null}
   */
  organiser(token) {
    return token ?? this.organiserToken;
  }

  // ---- the organiser ------------------------------------------------------------------

  /**
   * A new tournament, open for entrants (TO-8.1). Organisers only. An unknown game,
   * format or tie-break, or an option of another game, is a TypeError (an async call
   * rejects with it).
   * @param {CreateTournamentOptions} options
   * @param {{token?: string | null}} [auth]
   * @returns {Promise<{tournament_id: string, seed_commitment: Buffer}>}
   */
  async createTournament(options, { token } = {}) {
    const request = createRequest(options);
    const response = await this.unary('CreateTournament', request, this.organiser(token));
    return { tournament_id: response.tournament_id, seed_commitment: response.seed_commitment };
  }

  /**
   * Enter `name` (TO-8.2): resolves to their entrant token, shown once, and their seed.
   * Organisers only; FAILED_PRECONDITION once the first round has started.
   * @param {string} tournamentId
   * @param {string} name
   * @param {{token?: string | null}} [auth]
   * @returns {Promise<{entrant_token: string, seed: number}>}
   */
  addEntrant(tournamentId, name, { token } = {}) {
    return this.unary(
      'AddEntrant',
      { tournament_id: tournamentId, name },
      this.organiser(token),
    );
  }

  /**
   * Appoint `name` a referee of the tournament (TO-8.3): resolves to their token, shown
   * once. Organisers only.
   * @param {string} tournamentId
   * @param {string} name
   * @param {{token?: string | null}} [auth]
   * @returns {Promise<{referee_token: string}>}
   */
  appointReferee(tournamentId, name, { token } = {}) {
    return this.unary(
      'AppointReferee',
      { tournament_id: tournamentId, name },
      this.organiser(token),
    );
  }

  /**
   * Start the next round (TO-9.1, TO-9.2): resolves to the round, its tables with their
   * matches and reasons, its byes. Organisers only; FAILED_PRECONDITION (TO-9.1) while
   * the last round has a table without a result, its dispute window is open or a
   * dispute waits for a ruling.
   * @param {string} tournamentId
   * @param {{token?: string | null}} [auth]
   * @returns {Promise<TournamentRound>}
   */
  async startRound(tournamentId, { token } = {}) {
    const response = await this.unary(
      'StartRound',
      { tournament_id: tournamentId },
      this.organiser(token),
    );
    return response.round;
  }

  /**
   * End the tournament with its signed result sheet (TO-11): resolves to the final
   * event's digest. Organisers only; the server also ends it by itself once the last
   * round's dispute window has closed with no dispute open.
   * @param {string} tournamentId
   * @param {{token?: string | null}} [auth]
   * @returns {Promise<{digest: string}>}
   */
  endTournament(tournamentId, { token } = {}) {
    return this.unary(
      'EndTournament',
      { tournament_id: tournamentId },
      this.organiser(token),
    );
  }

  // ---- entrants -----------------------------------------------------------------------

  /**
   * Take the seat of the holder of `entrantToken` at their table of the round under way
   * (TO-9.2): the table's match, in which that same token acts for `seat` (a Session of
   * `Client.session(match_id, {token, seat})`, or `Client.takeSeat(match_id, token)`).
   * Taking it again answers the same seat.
   * @param {string} tournamentId
   * @param {string} entrantToken
   * @returns {Promise<{match_id: string, seat: number, round: number, table: number,
   *   version: number}>}
   */
  takeSeat(tournamentId, entrantToken) {
    // Answered once the table's match has seated the entrant: no call timeout.
    return this.unary('TakeSeat', { tournament_id: tournamentId }, entrantToken, {
      bounded: false,
    });
  }

  /**
   * Withdraw an entrant (TO-8.4): with `token` an entrant's own and no `entrant`, the
   * holder of that token; with an `entrant` name, by the organiser (the client's
   * organiser token unless `token` is given). Resolves to the first round they do not
   * play.
   * @param {string} tournamentId
   * @param {{entrant?: string, token?: string | null}} [options]
   * @returns {Promise<{first_missed_round: number}>}
   */
  withdraw(tournamentId, { entrant = '', token } = {}) {
    const caller = entrant ? this.organiser(token) : (token ?? null);
    return this.unary('Withdraw', { tournament_id: tournamentId, entrant }, caller);
  }

  /**
   * The holder of entrant `token` disputes `matchId`, a match of a table they sat at, at
   * `version` (0: its result as a whole), in `text` (TO-10.1). Resolves to the dispute's
   * number.
   * @param {string} tournamentId
   * @param {{matchId: string, version?: number, text: string, token: string}} options
   * @returns {Promise<{dispute: number}>}
   */
  fileDispute(tournamentId, { matchId, version = 0, text, token }) {
    return this.unary(
      'FileDispute',
      { tournament_id: tournamentId, match_id: matchId, version, text },
      token,
    );
  }

  // ---- referees -----------------------------------------------------------------------

  /**
   * The disputes not yet ruled on, oldest first (TO-10.2). A referee's token of the
   * tournament, or an organiser's (the client's, if no `token`).
   * @param {string} tournamentId
   * @param {{token?: string | null}} [auth]
   * @returns {Promise<Dispute[]>}
   */
  async listDisputes(tournamentId, { token } = {}) {
    const response = await this.unary(
      'ListDisputes',
      { tournament_id: tournamentId },
      this.organiser(token),
    );
    return response.disputes;
  }

  /**
   * The referee holding `token` rules on `dispute` (TO-10.3) with a `verdict` (see
   * `verdicts`) and a `reason`. Resolves to the ruling's number and, for a replay, the
   * fork's match id, whose seats the table's entrants take again with TakeSeat.
   * @param {string} tournamentId
   * @param {number} dispute
   * @param {Message} verdict a `Verdict`: `verdicts.stands()`, `.replace(...)`,
   *   `.replay(version)`, `.penalise(entrant, points)`
   * @param {{reason: string, token: string}} options
   * @returns {Promise<{ruling: number, replay_match_id: string}>}
   */
  async rule(tournamentId, dispute, verdict, { reason, token }) {
    return this.unary(
      'Rule',
      { tournament_id: tournamentId, dispute, verdict: verdictOf(verdict), reason },
      token,
    );
  }

  // ---- anyone -------------------------------------------------------------------------

  /**
   * The tournament as it stands: options, entrants, rounds with their tables and
   * results, rulings, standings.
   * @param {string} tournamentId
   * @returns {Promise<Tournament>}
   */
  async getTournament(tournamentId) {
    const response = await this.unary('GetTournament', { tournament_id: tournamentId });
    return response.tournament;
  }

  /**
   * One page of tournaments in creation order: `{tournaments, next_page_token}` (the
   * token is empty on the last page).
   * @param {{pageSize?: number, pageToken?: string}} [options] pageSize 0: the server's
   *   (20)
   * @returns {Promise<{tournaments: Message[], next_page_token: string}>}
   */
  listTournaments({ pageSize = 0, pageToken = '' } = {}) {
    return this.unary('ListTournaments', { page_size: pageSize, page_token: pageToken });
  }

  /**
   * The standings after `round` (0: everything so far), best first, with the tie-breaks
   * applied after points (TO-7).
   * @param {string} tournamentId
   * @param {{round?: number}} [options]
   * @returns {Promise<{standings: Standing[], tie_breaks: string[]}>}
   */
  getStandings(tournamentId, { round = 0 } = {}) {
    return this.unary('GetStandings', { tournament_id: tournamentId, round });
  }

  /**
   * The signed result sheet of an ended tournament (TO-11.2): `sheet` (JSON Lines: the
   * file `totem-replay tournament verify` checks offline), `digest` (hex), the server's
   * Ed25519 `signature` (64 bytes) over `resultSheetMessage` and its `public_key` (32
   * bytes, as GetServerKey gives it). FAILED_PRECONDITION (TO-11.1) before the end.
   * @param {string} tournamentId
   * @returns {Promise<{sheet: Buffer, digest: string, signature: Buffer, public_key: Buffer}>}
   */
  getResultSheet(tournamentId) {
    return this.unary('GetResultSheet', { tournament_id: tournamentId });
  }

  /**
   * The tournament's events after `afterVersion`, then each new one as it is recorded:
   * an async iterable that resumes by itself (see TournamentEventStream). It ends after
   * the final event (TournamentEnded).
   * @param {string} tournamentId
   * @param {WatchTournamentOptions} [options]
   * @returns {TournamentEventStream}
   */
  watchTournament(tournamentId, options = {}) {
    return new TournamentEventStream(this, tournamentId, options);
  }
}

/** The name of a tournament's last event: its result sheet (TO-11.2). */
export const FINAL_EVENT = 'TournamentEnded';

/**
 * @typedef {ResumeOptions & {token?: string | null,
 *   onEvent?: (event: TournamentEvent) => void}} WatchTournamentOptions `token`: whose
 *   view (none: the public one; the seeds show only to the operator's referee until the
 *   end)
 */

/**
 * A tournament's events in version order, each exactly once, with `fields` (the event's
 * `fields_json` parsed): WatchTournament, opened again after a transient failure from the
 * last version yielded, as EventStream does for a match (ResumableStream in
 * streams.js). It ends after the tournament's final event (TournamentEnded), or on
 * `close()` (or leaving the loop); a stream the server ends cleanly before the final event
 * (a server shutting down) is opened again, as after a transient failure.
 * @extends {ResumableStream<TournamentEvent>}
 */
export class TournamentEventStream extends ResumableStream {
  /**
   * @param {TournamentClient} client
   * @param {string} tournamentId
   * @param {WatchTournamentOptions} [options]
   */
  constructor(client, tournamentId, options = {}) {
    const { onEvent, ...rest } = options;
    super(client, {
      ...rest,
      onEvent: (event) => {
        event.fields = parseFields(event.fields_json);
        if (event.name === FINAL_EVENT) this.ended = true;
        onEvent?.(event);
      },
    });
    /** Whether the final event has been yielded: the stream has nothing more. */
    this.ended = false;
    this.tournaments = client;
    this.tournamentId = tournamentId;
    this.token = options.token ?? null;
  }

  /**
   * Only the final event ends the tournament's story: a stream the server ends cleanly
   * before it (a server shutting down) is opened again.
   * @returns {boolean}
   */
  complete() {
    return this.ended;
  }

  /**
   * @param {number} afterVersion
   * @returns {grpc.ClientReadableStream<TournamentEvent>}
   */
  open(afterVersion) {
    return this.tournaments.stub.WatchTournament(
      { tournament_id: this.tournamentId, after_version: afterVersion },
      bearer(this.token),
    );
  }
}

/** The prefix of a tournament's signature: never a match's, nor the reverse. */
export const TOURNAMENT_SIGNATURE_PREFIX = 'totem-arena tournament signature v1\n';

/**
 * The exact bytes the server signs at a tournament's end (TO-11.2): the prefix, then the
 * tournament id, the final event's version and its digest (hex, lower case), one per
 * line. Check the result sheet's `signature` over them with its `public_key` (Ed25519).
 * @param {string} tournamentId
 * @param {number} version the final event's
 * @param {string} digest the final event's
 * @returns {Buffer}
 */
export function resultSheetMessage(tournamentId, version, digest) {
  const lines = `${tournamentId.toLowerCase()}\n${version}\n${digest.toLowerCase()}`;
  return Buffer.from(TOURNAMENT_SIGNATURE_PREFIX + lines, 'utf8');
}

/**
 * @param {string} json
 * @returns {Record<string, any>}
 */
function parseFields(json) {
  if (!json) return {};
  try {
    return JSON.parse(json);
  } catch {
    return {};
  }
}

/**
 * The CreateTournamentRequest of `createTournament`'s options.
 * @param {CreateTournamentOptions} options
 * @returns {Message}
 */
export function createRequest(options) {
  const known = [
    'game',
    'options',
    'title',
    'format',
    'tableSize',
    'rounds',
    'tieBreaks',
    'disputeWindowMs',
    'noShowMs',
    'duplicate',
    'abandonAfterMs',
    'autoRounds',
  ];
  for (const key of Object.keys(options ?? {})) {
    if (!known.includes(key)) {
      throw new TypeError(`${key} is not an option of a tournament; its options: ${known.join(', ')}`);
    }
  }
  if (options?.game === undefined) throw new TypeError('a tournament names its game');
  if (options.format === undefined) throw new TypeError('a tournament names its format');
  const info = gameInfo(options.game);
  /** @type {Message} */
  const request = {
    game: info.enum,
    title: options.title ?? '',
    format: enumValue(FORMATS, options.format, 'format'),
    table_size: options.tableSize ?? 0,
    rounds: options.rounds ?? 0,
    tie_breaks: (options.tieBreaks ?? []).map((t) => enumValue(TIE_BREAKS, t, 'a tie-break')),
    duplicate: Boolean(options.duplicate),
    abandon_after_ms: options.abandonAfterMs ?? 0,
    auto_rounds: Boolean(options.autoRounds),
  };
  // Optional in the contract: unset is the server's default, 0 is no window.
  if (options.disputeWindowMs !== undefined) request.dispute_window_ms = options.disputeWindowMs;
  if (options.noShowMs !== undefined) request.no_show_ms = options.noShowMs;
  if (options.options !== undefined) request[info.field] = info.options(options.options);
  return request;
}

/**
 * A `Verdict`: one of `verdicts`' messages as it is; anything else is a TypeError.
 * @param {Message} verdict
 * @returns {Message}
 */
function verdictOf(verdict) {
  const kinds = ['stands', 'replace', 'replay', 'penalise'];
  const keys = Object.keys(verdict ?? {}).filter((key) => verdict[key] != null);
  if (keys.length !== 1 || !kinds.includes(keys[0])) {
    throw new TypeError(`a verdict is one of ${kinds.join(', ')} (see verdicts), not ${JSON.stringify(verdict)}`);
  }
  return verdict;
}
