// A client of the MatchService (totem.v1) over @grpc/grpc-js.
//
// It returns the messages as proto-loader decodes them (see OBJECT_OPTIONS in proto.js)
// and adds what every client needs: the connection, bearer tokens, the seen_version
// bookkeeping, errors with rule ids, and a Watch stream that resumes by itself.
//
// Here: `connect` and the Client, its unary calls. The games it speaks, their options and
// commands are in games.js; its Watch and Play streams in streams.js; the Session of one
// participant in session.js; what the calls carry (bearer token, ActRequest) in calls.js.
import grpc from '@grpc/grpc-js';

import { actRequest, bearer } from './calls.js';
import { TotemError } from './errors.js';
import { DEFAULT_GAME, GAMES, gameInfo } from './games.js';
import { loadContract } from './proto.js';
import { Receipts } from './receipts.js';
import { Session } from './session.js';
import { DEFAULT_CALL_TIMEOUT_MS, StubClient } from './stub_client.js';
import { EventStream, PlayStream } from './streams.js';

/**
 * @typedef {import('./messages.js').Message} Message
 * @typedef {import('./messages.js').MatchView} MatchView
 * @typedef {import('./messages.js').ActResponse} ActResponse
 * @typedef {import('./messages.js').Command} Command
 * @typedef {import('./streams.js').WatchOptions} WatchOptions
 */

export { DEFAULT_CALL_TIMEOUT_MS };

/**
 * @typedef {object} CreatedMatch
 * @property {string} match_id
 * @property {string} referee_token bearer token of the referee
 * @property {Buffer} seed_commitment
 *
 * @typedef {object} MatchOptions what every match takes
 * @property {string} [game] a name of the game table (GAMES); the default game if unset
 * @property {Buffer | string} [entropy] mixed into the match seed, at most 64 bytes
 *
 * @typedef {MatchOptions & import('./games.js').GameOptions} CreateMatchOptions the
 *   match's and its game's options (each game's module documents its own); options left
 *   undefined take the server's defaults
 */

/**
 * @typedef {object} ClientOptions
 * @property {number | null} [callTimeoutMs]
 * @property {grpc.ChannelCredentials} [credentials]
 * @property {grpc.ChannelOptions} [channelOptions] gRPC channel options; the reconnection ones
 *   of lib/reconnect.js are added unless given (after an outage, the channel tries again
 *   at least every second)
 * @property {string} [protosDir]
 * @property {string | null} [organiserToken] sent with CreateMatch only
 * @property {string | null} [receiptsDir] where the newest receipt of each match is
 *   written as it comes (`client.receipts`; kept in memory without it)
 */

/**
 * A client of the server at `address` (`host:port`), over a plaintext channel.
 * Connecting is lazy: the first call (or `waitReady`) finds out whether the server is
 * there. `callTimeoutMs` bounds every unary call (null: no bound), not Watch streams.
 * `organiserToken`, an organiser's credential from the server's operator, is sent when
 * creating a match (only organisers may, unless the server opens creation to anyone)
 * and nowhere else.
 * @param {string} address
 * @param {ClientOptions} [options]
 * @returns {Client}
 */
export function connect(address, options = {}) {
  return new Client(address, options);
}

/** Calls of the MatchService on one channel. Every failed call rejects with TotemError. */
export class Client extends StubClient {
  /**
   * @param {string} address
   * @param {ClientOptions} [options]
   */
  constructor(address, options = {}) {
    super(loadContract(options.protosDir).MatchService, address, options);
    /**
     * The newest signed receipt of each match a command was answered for (Act or Play),
     * written to `receiptsDir` as it comes when given (lib/receipts.js).
     */
    this.receipts = new Receipts(options.receiptsDir ?? null);
    /** The game of each match this client created, by match id. @type {Map<string, string>} */
    this.games = new Map();
  }

  // ---- matches ----------------------------------------------------------------------

  /**
   * Create a match of `game` (the default game if unset) with that game's options (see
   * CreateMatchOptions); an option of another game is a TypeError.
   * @param {CreateMatchOptions} [options]
   * @returns {Promise<CreatedMatch>}
   */
  async createMatch(options = {}) {
    const { game = DEFAULT_GAME, entropy, ...gameOptions } = options;
    const info = gameInfo(game);
    const request = {
      game: info.enum,
      [info.field]: info.options(gameOptions),
      entropy: Buffer.from(entropy ?? ''),
    };
    const response = await this.unary('CreateMatch', request, this.organiserToken);
    this.games.set(response.match_id, info.name);
    return {
      match_id: response.match_id,
      referee_token: response.referee_token,
      seed_commitment: response.seed_commitment,
    };
  }

  /**
   * Take a seat: the next free one, or `seat`. The Session holds the player token.
   * Spectators do not join: see `spectate`.
   * @param {string} matchId
   * @param {{name?: string, seat?: number, entropy?: Buffer | string}} [options]
   * @returns {Promise<Session>}
   */
  async join(matchId, { name = '', seat, entropy } = {}) {
    /** @type {Message} */
    const request = { match_id: matchId, name, entropy: Buffer.from(entropy ?? '') };
    if (seat !== undefined) request.seat = seat;
    else request.any_seat = true;
    const response = await this.unary('JoinMatch', request);
    return new Session(this, matchId, {
      token: response.player_token,
      name,
      seat: response._seat === 'seat' ? response.seat : null,
      role: response.role,
      version: response.version,
    });
  }

  /**
   * A spectator's session: no token, no seat.
   * @param {string} matchId
   * @returns {Session}
   */
  spectate(matchId) {
    return new Session(this, matchId, { name: 'spectator', role: 'VIEWER_ROLE_SPECTATOR' });
  }

  /**
   * The referee's session of a match this client created: it sees everything.
   * @param {CreatedMatch} created
   * @returns {Session}
   */
  referee(created) {
    return new Session(this, created.match_id, {
      token: created.referee_token,
      name: 'referee',
      role: 'VIEWER_ROLE_REFEREE',
    });
  }

  /**
   * A session for a token obtained earlier (a player's, or the referee's).
   * @param {string} matchId
   * @param {{token?: string, name?: string, seat?: number | null}} [options]
   * @returns {Session}
   */
  session(matchId, options = {}) {
    return new Session(this, matchId, options);
  }

  /**
   * Take the seat that `token` holds in `matchId`: the same Session a join gives, for a
   * seat already taken in its player's name, such as a fork's (`totem-replay fork`
   * prints one token per seat) or one whose token the referee reissued. The server says
   * which seat it is (GetMatch with the token answers with the holder's role and seat);
   * the seat keeps its name. A token not valid in that match rejects with
   * TotemError(UNAUTHENTICATED); the referee's or an organiser's, which holds no seat,
   * with TotemError(PERMISSION_DENIED).
   * @param {string} matchId
   * @param {string} token
   * @returns {Promise<Session>}
   */
  async takeSeat(matchId, token) {
    const session = new Session(this, matchId, { token });
    let view;
    try {
      view = await session.get();
    } catch (error) {
      if (!(error instanceof TotemError) || error.code !== 'UNAUTHENTICATED') throw error;
      throw new TotemError(
        error.code,
        `this token holds no seat in match ${matchId} (${error.message}): give the token ` +
          'printed for your seat, of this very match',
        { rule: error.rule, cause: error },
      );
    }
    if (session.seat === null) {
      const role = String(view.role).replace('VIEWER_ROLE_', '').toLowerCase();
      throw new TotemError(
        'PERMISSION_DENIED',
        `this token is the ${role}'s of match ${matchId}, which holds no seat: give a seat's token`,
      );
    }
    const player = view.summary.players.find((/** @type {any} */ p) => p.seat === session.seat);
    session.name = player?.name ?? '';
    return session;
  }

  /**
   * The match as the holder of `token` may see it (no token: a spectator).
   * @param {string} matchId
   * @param {{token?: string | null}} [options]
   * @returns {Promise<MatchView>}
   */
  getMatch(matchId, { token = null } = {}) {
    return this.unary('GetMatch', { match_id: matchId }, token);
  }

  /**
   * One page of matches, in creation order: `{matches, next_page_token}` (the token is
   * empty on the last page).
   * @param {{pageSize?: number, pageToken?: string, game?: string, status?: string}} [options]
   *   pageSize 0 lets the server choose (20); `game` ('tribes', or an enum name such as
   *   'GAME_TRIBES') and `status` ('MATCH_STATUS_ENDED'...) filter when set
   * @returns {Promise<{matches: Message[], next_page_token: string}>}
   */
  listMatches({ pageSize = 0, pageToken = '', game, status } = {}) {
    const known = Object.values(GAMES).some((g) => g.enum === game || g.name === game);
    return this.unary('ListMatches', {
      page_size: pageSize,
      page_token: pageToken,
      // An enum name this client does not know (a game not playable yet) goes as it is.
      game: game === undefined ? 'GAME_UNSPECIFIED' : known ? gameInfo(game).enum : game,
      status: status ?? 'MATCH_STATUS_UNSPECIFIED',
    });
  }

  /**
   * Send one command: a player's for the token's seat, or the referee's (with the
   * referee token and no seat); answered once its events are stored.
   *
   * `command` names its game, as ActRequest's `command` oneof does:
   * `{tribes: TribesCommand}` (as `tribesCommands` make them) or
   * `{jungle_speed: JungleSpeedCommand}`; a bare command (as `commands` make them) is
   * one of `game` (default: the default game).
   * `seenVersion` is the last event version the caller had seen when it decided (JS-5.1);
   * `seat`, if given, must be the token's own seat (leave it unset for the referee).
   * @param {string} matchId
   * @param {Command} command
   * @param {{token: string, seenVersion?: number, seat?: number | null, game?: string | null}}
   *   options
   * @returns {Promise<ActResponse>}
   */
  act(matchId, command, { token, seenVersion = 0, seat = null, game = null }) {
    // Built before any await: a malformed command throws at the call, not in a promise.
    const request = actRequest(matchId, command, { seenVersion, seat, game });
    return this.unary('Act', request, token).then((response) => this.kept(response));
  }

  /**
   * `response`, an ActResponse, its receipt kept if it is its match's newest.
   * @param {ActResponse} response
   * @returns {ActResponse}
   */
  kept(response) {
    this.receipts.keep(response?.receipt);
    return response;
  }

  /**
   * Commands for the holder of `token` over one open Play stream, rather than one Act
   * call each (see PlayStream): prefer it for grabs and frequent commands. The stream
   * opens at once; `await stream.close()` when done.
   * @param {{token: string}} options
   * @returns {PlayStream}
   */
  play({ token }) {
    return new PlayStream(this, token);
  }

  /**
   * A fresh token for `seat` (referee only); the seat's old token stops working.
   * @param {string} matchId
   * @param {number} seat
   * @param {{refereeToken: string}} options
   * @returns {Promise<{player_token: string, version: number}>}
   */
  reissueToken(matchId, seat, { refereeToken }) {
    return this.unary('ReissueToken', { match_id: matchId, seat }, refereeToken);
  }

  /**
   * The events of a match after `afterVersion`, then live ones: an async iterable that
   * resumes by itself (see EventStream).
   * @param {string} matchId
   * @param {WatchOptions} [options]
   * @returns {EventStream}
   */
  watch(matchId, options = {}) {
    return new EventStream(this, matchId, options);
  }
}
