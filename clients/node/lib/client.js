// A client of the MatchService (totem.v1) over @grpc/grpc-js.
//
// It returns the messages as proto-loader decodes them (see OBJECT_OPTIONS in proto.js)
// and adds what every client needs: the connection, bearer tokens, the seen_version
// bookkeeping, errors with rule ids, and a Watch stream that resumes by itself.
import { setTimeout as sleep } from 'node:timers/promises';

import grpc from '@grpc/grpc-js';

import { TotemError } from './errors.js';
import { loadContract } from './proto.js';

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

/** Watch failures after which the stream is opened again from the last version seen. */
export const RESUMABLE_CODES = Object.freeze(
  new Set(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'ABORTED', 'DEADLINE_EXCEEDED']),
);

export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/**
 * Messages are plain objects with the .proto field names (see README.md).
 * @typedef {Record<string, any>} Message
 * @typedef {Message} MatchEvent `totem.v1.MatchEvent`: `version`, `event` (which of
 *   `player_joined`, `match_ended`, `jungle_speed`, `token_reissued` is set), `state`
 * @typedef {Message} MatchState `totem.v1.MatchState`: `summary`, `jungle_speed`
 * @typedef {Message} MatchView `totem.v1.GetMatchResponse`
 * @typedef {Message} ActResponse `totem.v1.ActResponse`: `version`, `events`, `state`
 * @typedef {Message} JungleSpeedCommand `{start: {}}`, `{reveal: {}}` or `{grab: {target}}`
 * @typedef {'default' | 'duel' | 'arrows'} GrabTargetName
 *
 * @typedef {object} CreatedMatch
 * @property {string} match_id
 * @property {string} referee_token bearer token of the referee
 * @property {Buffer} seed_commitment
 *
 * @typedef {object} CreateMatchOptions options left undefined take the server's defaults
 * @property {'ES' | 'RU'} [variant] default 'ES'
 * @property {number} [maxPlayers] 2 to 10 (JS-1.5)
 * @property {number} [turnTimeoutMs] 0 turns the turn timer off (JS-3.4)
 * @property {number} [minRevealIntervalMs] (JS-3.4)
 * @property {{inward_arrows?: number, outward_arrows?: number, coloured_arrows?: number}}
 *   [specials] (JS-1.3)
 * @property {number[]} [prearrangedDeal] card ids from the top of the deck (JS-2.4)
 * @property {Buffer | string} [entropy] mixed into the match seed, at most 64 bytes
 *
 * @typedef {object} WatchOptions
 * @property {number} [afterVersion] send the events after this version (default 0: all)
 * @property {string | null} [token] whose view (none: a spectator's)
 * @property {boolean} [omitState] leave `event.state` unset
 * @property {number | null} [maxFailures] failures in a row before giving up (default
 *   10; null: never)
 * @property {AbortSignal} [signal] stops the stream, as `close()` does
 * @property {(event: MatchEvent) => void} [onEvent] called with each event first
 */

/**
 * A client of the server at `address` (`host:port`), over a plaintext channel.
 * Connecting is lazy: the first call (or `waitReady`) finds out whether the server is
 * there. `callTimeoutMs` bounds every unary call (null: no bound), not Watch streams.
 * @param {string} address
 * @param {{callTimeoutMs?: number | null, credentials?: grpc.ChannelCredentials,
 *   channelOptions?: grpc.ChannelOptions, protosDir?: string}} [options]
 * @returns {Client}
 */
export function connect(address, options = {}) {
  return new Client(address, options);
}

/**
 * @param {string | null | undefined} token
 * @returns {grpc.Metadata}
 */
function bearer(token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/** Calls of the MatchService on one channel. Every failed call rejects with TotemError. */
export class Client {
  /**
   * @param {string} address
   * @param {{callTimeoutMs?: number | null, credentials?: grpc.ChannelCredentials,
   *   channelOptions?: grpc.ChannelOptions, protosDir?: string}} [options]
   */
  constructor(address, options = {}) {
    const { MatchService } = loadContract(options.protosDir);
    this.address = address;
    this.callTimeoutMs =
      options.callTimeoutMs === undefined ? DEFAULT_CALL_TIMEOUT_MS : options.callTimeoutMs;
    this.closed = false;
    /** The generated stub, for anything this class does not wrap. */
    this.stub = new MatchService(
      address,
      options.credentials ?? grpc.credentials.createInsecure(),
      options.channelOptions ?? {},
    );
  }

  /** Close the channel; calls still running end with an error. */
  close() {
    this.closed = true;
    this.stub.close();
  }

  /**
   * Wait until the channel is connected, or reject with TotemError(UNAVAILABLE).
   * @param {number} [ms]
   * @returns {Promise<void>}
   */
  waitReady(ms = 5000) {
    return new Promise((resolve, reject) => {
      this.stub.waitForReady(Date.now() + ms, (/** @type {Error | undefined} */ error) =>
        error
          ? reject(new TotemError('UNAVAILABLE', `no connection within ${ms} ms`, { cause: error }))
          : resolve(),
      );
    });
  }

  /**
   * @param {string} method a MatchService method name
   * @param {Message} request
   * @param {string | null} [token]
   * @returns {Promise<any>}
   */
  unary(method, request, token = null) {
    /** @type {grpc.CallOptions} */
    const options = {};
    if (this.callTimeoutMs !== null) options.deadline = Date.now() + this.callTimeoutMs;
    return new Promise((resolve, reject) => {
      this.stub[method](
        request,
        bearer(token),
        options,
        (/** @type {grpc.ServiceError | null} */ error, /** @type {any} */ response) =>
          error ? reject(TotemError.fromServiceError(error)) : resolve(response),
      );
    });
  }

  // ---- matches ----------------------------------------------------------------------

  /**
   * Create a Jungle Speed match.
   * @param {CreateMatchOptions} [options]
   * @returns {Promise<CreatedMatch>}
   */
  async createMatch(options = {}) {
    const variant = VARIANTS[/** @type {'ES' | 'RU'} */ ((options.variant ?? 'ES').toUpperCase())];
    if (variant === undefined) {
      throw new TypeError(`variant must be one of ${Object.keys(VARIANTS).join(', ')}`);
    }
    /** @type {Message} */
    const jungleSpeed = { variant };
    if (options.maxPlayers !== undefined) jungleSpeed.max_players = options.maxPlayers;
    if (options.turnTimeoutMs !== undefined) jungleSpeed.turn_timeout_ms = options.turnTimeoutMs;
    if (options.minRevealIntervalMs !== undefined) {
      jungleSpeed.min_reveal_interval_ms = options.minRevealIntervalMs;
    }
    if (options.specials !== undefined) jungleSpeed.specials = options.specials;
    if (options.prearrangedDeal !== undefined) {
      jungleSpeed.prearranged_deal = options.prearrangedDeal;
    }
    const response = await this.unary('CreateMatch', {
      game: 'GAME_JUNGLE_SPEED',
      jungle_speed: jungleSpeed,
      entropy: Buffer.from(options.entropy ?? ''),
    });
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
   *   pageSize 0 lets the server choose (20); `game` ('GAME_JUNGLE_SPEED') and `status`
   *   ('MATCH_STATUS_ENDED'...) filter when set
   * @returns {Promise<{matches: Message[], next_page_token: string}>}
   */
  listMatches({ pageSize = 0, pageToken = '', game, status } = {}) {
    return this.unary('ListMatches', {
      page_size: pageSize,
      page_token: pageToken,
      game: game ?? 'GAME_UNSPECIFIED',
      status: status ?? 'MATCH_STATUS_UNSPECIFIED',
    });
  }

  /**
   * Send one command for the token's seat; answered once its events are stored.
   * `seenVersion` is the last event version the caller had seen when it decided (JS-5.1);
   * `seat`, if given, must be the token's own seat.
   * @param {string} matchId
   * @param {JungleSpeedCommand} command
   * @param {{token: string, seenVersion?: number, seat?: number | null}} options
   * @returns {Promise<ActResponse>}
   */
  act(matchId, command, { token, seenVersion = 0, seat = null }) {
    /** @type {Message} */
    const request = { match_id: matchId, seen_version: seenVersion, jungle_speed: command };
    if (seat !== null && seat !== undefined) request.seat = seat;
    return this.unary('Act', request, token);
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

/** Commands of Jungle Speed, as `JungleSpeedCommand` objects. */
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
 * The events of one match in version order, each exactly once, as an async iterable.
 *
 * When the stream breaks with a transient status (RESUMABLE_CODES: the server is
 * unavailable or restarting, or the stream fell behind and was closed with
 * RESOURCE_EXHAUSTED), it is opened again with `after_version` = the last version
 * yielded, after a short backoff (none the first time it fell behind). A version already
 * yielded is skipped; a missing version is treated as a break. It ends when the server
 * ends the stream (the match has ended and every event was sent), or on `close()`.
 * After `maxFailures` failures in a row with no event in between, the last one is thrown
 * as a TotemError, as is any failure that is not transient.
 */
export class EventStream {
  static BACKOFF_START_MS = 50;
  static BACKOFF_MAX_MS = 2000;

  /**
   * @param {Client} client
   * @param {string} matchId
   * @param {WatchOptions} [options]
   */
  constructor(client, matchId, options = {}) {
    this.client = client;
    this.matchId = matchId;
    /** The version of the last event yielded. */
    this.lastVersion = options.afterVersion ?? 0;
    /** How often the stream was opened again. */
    this.resumes = 0;
    this.token = options.token ?? null;
    this.omitState = options.omitState ?? false;
    this.maxFailures = options.maxFailures === undefined ? 10 : options.maxFailures;
    this.onEvent = options.onEvent ?? null;
    this.closed = false;
    /** @type {grpc.ClientReadableStream<MatchEvent> | null} */
    this.call = null;
    /** @type {AbortController} */
    this.stopping = new AbortController();
    options.signal?.addEventListener('abort', () => this.close(), { once: true });
    if (options.signal?.aborted) this.close();
    this.events = this.run();
  }

  [Symbol.asyncIterator]() {
    return this.events;
  }

  /** Stop watching: the call is cancelled and the iteration ends. */
  close() {
    this.closed = true;
    this.stopping.abort();
    this.call?.cancel();
  }

  /** @returns {AsyncGenerator<MatchEvent, void, undefined>} */
  async *run() {
    let failures = 0;
    while (!this.closed) {
      const call = this.client.stub.Watch(
        { match_id: this.matchId, after_version: this.lastVersion, omit_state: this.omitState },
        bearer(this.token),
      );
      // Errors reach the loop below; this keeps one that comes after it stopped listening
      // (a cancelled call reports CANCELLED) from being an unhandled 'error' event.
      call.on('error', () => {});
      this.call = call;
      /** @type {TotemError} */
      let failure;
      try {
        for await (const event of call) {
          if (this.closed) return; // events already received are dropped
          if (event.version <= this.lastVersion) continue; // yielded before a resume
          if (event.version !== this.lastVersion + 1) {
            const text = `the server sent version ${event.version} after ${this.lastVersion}`;
            throw new GapError(text);
          }
          this.lastVersion = event.version;
          failures = 0;
          this.onEvent?.(event);
          yield event;
        }
        return;
      } catch (error) {
        if (this.closed) return;
        if (error instanceof GapError) {
          failure = new TotemError('DATA_LOSS', error.message);
        } else {
          failure = TotemError.fromServiceError(/** @type {grpc.ServiceError} */ (error));
          if (this.client.closed || !RESUMABLE_CODES.has(failure.code)) throw failure;
        }
      } finally {
        call.cancel();
        this.call = null;
      }
      failures += 1;
      if (this.maxFailures !== null && failures > this.maxFailures) throw failure;
      try {
        await sleep(this.backoff(failures, failure), undefined, { signal: this.stopping.signal });
      } catch {
        return; // closed while waiting
      }
      this.resumes += 1;
    }
  }

  /**
   * @param {number} failures
   * @param {TotemError} failure
   * @returns {number} milliseconds
   */
  backoff(failures, failure) {
    if (failures === 1 && failure.code === 'RESOURCE_EXHAUSTED') return 0; // it fell behind
    return Math.min(EventStream.BACKOFF_MAX_MS, EventStream.BACKOFF_START_MS * 2 ** (failures - 1));
  }
}

class GapError extends Error {}

/**
 * One participant of one match: a player (with a seat), a spectator, or the referee.
 *
 * It sends its bearer token with every call and remembers the highest event version it
 * has seen (`seenVersion`), from joins, views, command answers and watched events;
 * commands report it to the server (JS-5.1). `state` is the newest MatchState it has
 * received (from its watch stream or a command's answer), so that a client can play from
 * the stream alone.
 */
export class Session {
  /**
   * @param {Client} client
   * @param {string} matchId
   * @param {{token?: string, name?: string, seat?: number | null, role?: string,
   *   version?: number}} [options]
   */
  constructor(client, matchId, options = {}) {
    this.client = client;
    this.matchId = matchId;
    this.token = options.token ?? '';
    this.name = options.name ?? '';
    /** @type {number | null} */
    this.seat = options.seat ?? null;
    this.role = options.role ?? 'VIEWER_ROLE_UNSPECIFIED';
    this.seenVersion = options.version ?? 0;
    /** @type {MatchState | null} */
    this.state = null;
  }

  get isPlayer() {
    return this.seat !== null;
  }

  /**
   * Note that the events up to `version` have been seen, and the state then.
   * @param {number} version
   * @param {MatchState | null} [state]
   */
  saw(version, state = null) {
    if (state && (this.state === null || state.summary.version >= this.state.summary.version)) {
      this.state = state;
    }
    this.seenVersion = Math.max(this.seenVersion, version);
  }

  /**
   * The match as this participant may see it.
   * @returns {Promise<MatchView>}
   */
  async get() {
    const view = await this.client.getMatch(this.matchId, { token: this.token || null });
    this.saw(view.summary.version);
    if (view._seat === 'seat' && this.seat === null) this.seat = view.seat;
    if (this.role === 'VIEWER_ROLE_UNSPECIFIED') this.role = view.role;
    return view;
  }

  /**
   * Send a command for this session's seat with `seenVersion` (default: the last
   * version this session saw).
   * @param {JungleSpeedCommand} command
   * @param {{seenVersion?: number}} [options]
   * @returns {Promise<ActResponse>}
   */
  async act(command, { seenVersion } = {}) {
    const response = await this.client.act(this.matchId, command, {
      token: this.token,
      seenVersion: seenVersion ?? this.seenVersion,
      seat: this.seat,
    });
    this.saw(response.version, response.state);
    return response;
  }

  /** Start the match with the seats taken so far (at least two). */
  start() {
    return this.act(commands.start());
  }

  /** Reveal the top face-down card; only on one's turn (JS-3.1). */
  reveal() {
    return this.act(commands.reveal());
  }

  /**
   * Grab the totem (JS-5). `target` chooses between an open duel and an inward-arrows
   * race (ES only, JS-6.1); 'default' lets the server choose.
   * @param {GrabTargetName} [target]
   */
  grab(target = 'default') {
    return this.act(commands.grab(target));
  }

  /**
   * Watch the match as this participant; each event's state becomes `state`.
   * @param {Omit<WatchOptions, 'token' | 'onEvent'>} [options]
   * @returns {EventStream}
   */
  watch(options = {}) {
    return this.client.watch(this.matchId, {
      ...options,
      token: this.token || null,
      onEvent: (event) => this.saw(event.version, event.state),
    });
  }
}
