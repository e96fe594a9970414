// The Session: what a player, a spectator or the referee does in one match, through the
// client that made it (`join`, `spectate`, `referee`, `session`, `takeSeat`).
import { DEFAULT_GAME, gameInfo, gameOfSummary, withGameVerbs } from './games.js';

/**
 * @typedef {import('./client.js').Client} Client
 * @typedef {import('./messages.js').Message} Message
 * @typedef {import('./messages.js').MatchState} MatchState
 * @typedef {import('./messages.js').MatchView} MatchView
 * @typedef {import('./messages.js').ActResponse} ActResponse
 * @typedef {import('./messages.js').Command} Command
 * @typedef {import('./messages.js').GrabTargetName} GrabTargetName
 * @typedef {import('./streams.js').EventStream} EventStream
 * @typedef {import('./streams.js').PlayStream} PlayStream
 * @typedef {import('./streams.js').WatchOptions} WatchOptions
 */

/**
 * One participant of one match: a player (with a seat), a spectator, or the referee.
 *
 * It sends its bearer token with every call and remembers the highest event version it
 * has seen (`seenVersion`), from joins, views, command answers and watched events;
 * commands report it to the server (JS-5.1). `state` is the newest MatchState it has
 * received (from its watch stream or a command's answer), so that a client can play from
 * the stream alone.
 */
class SessionCore {
  /**
   * @param {Client} client
   * @param {string} matchId
   * @param {{token?: string, name?: string, seat?: number | null, role?: string,
   *   version?: number, game?: string | null}} [options]
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
    /**
     * The match's game (its name in the game table): given, or known to the client that
     * created the match, or learnt from the first state or view; null until then.
     * @type {string | null}
     */
    this.game = options.game ? gameInfo(options.game).name : (client.games.get(matchId) ?? null);
    /** @type {PlayStream | null} */
    this.play = null;
    /** True while this session's commands go over a Play stream (`openPlay`). */
    this.onStream = false;
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
      this.game ??= gameOfSummary(state.summary);
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
    this.game ??= gameOfSummary(view.summary);
    if (view._seat === 'seat' && this.seat === null) this.seat = view.seat;
    if (this.role === 'VIEWER_ROLE_UNSPECIFIED') this.role = view.role;
    return view;
  }

  /**
   * Send a command for this session's seat (the referee's session has none) with
   * `seenVersion` (default: the last version this session saw). A bare command is one of
   * the session's game (see Client.act).
   * @param {Command} command
   * @param {{seenVersion?: number}} [options]
   * @returns {Promise<ActResponse>}
   */
  async act(command, { seenVersion } = {}) {
    const options = {
      seenVersion: seenVersion ?? this.seenVersion,
      seat: this.seat,
      game: this.game,
    };
    const response = this.onStream
      ? await this.stream().act(this.matchId, command, options)
      : await this.client.act(this.matchId, command, { ...options, token: this.token });
    this.saw(response.version, response.state);
    return response;
  }

  /**
   * From now on, send this session's commands (`act`, `reveal`, `grab`...) over one Play
   * stream rather than one Act call each, until `closePlay()`. Prefer it for grabs and
   * frequent commands: a command on an open stream is receive-stamped as soon as the
   * server reads it (JS-5.1). The stream opens now, ahead of any race. If it later ends
   * with an error (the server restarts), the commands waiting on it reject with that
   * error and the next command opens a new stream.
   * @returns {PlayStream}
   */
  openPlay() {
    this.onStream = true;
    return this.stream();
  }

  /**
   * Back to one Act call per command; resolves once the Play stream has ended, after
   * the commands waiting on it are answered.
   * @returns {Promise<void>}
   */
  async closePlay() {
    this.onStream = false;
    const stream = this.play;
    this.play = null;
    await stream?.close();
  }

  /** @returns {PlayStream} the session's Play stream; a new one if it has none or it ended */
  stream() {
    if (this.play === null || this.play.done) this.play = this.client.play({ token: this.token });
    return this.play;
  }

  /**
   * Start the match with the seats taken so far (at least two). `game` is the match's
   * game: by default the session's (`game`), else the client's default game.
   * @param {{game?: string}} [options]
   */
  start({ game } = {}) {
    const info = gameInfo(game ?? this.game ?? DEFAULT_GAME);
    return this.act({ [info.field]: { start: {} } });
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

/**
 * A session, with every game's verbs besides `act` (`reveal` and `grab`, `lift` and
 * `place`, `village`...: each game's module in lib/games/ gives its own).
 */
export class Session extends withGameVerbs(SessionCore) {}
