// The streams of the MatchService: Watch (EventStream), which resumes by itself, and
// Play (PlayStream), one open stream of commands for one token.
import { setTimeout as sleep } from 'node:timers/promises';

import grpc from '@grpc/grpc-js';

import { actRequest, bearer } from './calls.js';
import { TotemError } from './errors.js';
import { pause } from './reconnect.js';

/**
 * @typedef {import('./client.js').Client} Client
 * @typedef {import('./messages.js').Message} Message
 * @typedef {import('./messages.js').MatchEvent} MatchEvent
 * @typedef {import('./messages.js').ActResponse} ActResponse
 * @typedef {import('./messages.js').Command} Command
 */

/** Watch failures after which the stream is opened again from the last version seen. */
export const RESUMABLE_CODES = Object.freeze(
  new Set(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'ABORTED', 'DEADLINE_EXCEEDED']),
);

/**
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
 * @typedef {object} ResumeOptions what every resuming stream takes
 * @property {number} [afterVersion] send the events after this version (default 0: all)
 * @property {number | null} [maxFailures] failures in a row before giving up (default
 *   10; null: never)
 * @property {AbortSignal} [signal] stops the stream, as `close()` does
 */

/**
 * The events of one aggregate (a match, a tournament) in version order, each exactly
 * once, as an async iterable; a subclass says how to open the server's stream from a
 * version (`open`).
 *
 * When the stream breaks with a transient status (RESUMABLE_CODES: the server is
 * unavailable or restarting, or the stream fell behind and was closed with
 * RESOURCE_EXHAUSTED), it is opened again with `after_version` = the last version
 * yielded, after a pause (lib/reconnect.js: what the server's retry hint says, else 50 ms
 * doubling up to 1 s; none the first time it fell behind). A version already
 * yielded is skipped; a missing version is treated as a break. It ends when the server
 * ends the stream (every event was sent and there will be no more), or on `close()`.
 * After `maxFailures` failures in a row with no event in between, the last one is thrown
 * as a TotemError, as is any failure that is not transient.
 * @template {Message} E
 */
export class ResumableStream {
  /**
   * @param {{closed: boolean}} client what the stream is read through: once it is
   *   closed, no failure is worth a resume
   * @param {ResumeOptions & {onEvent?: ((event: E) => void) | null}} [options]
   */
  constructor(client, options = {}) {
    this.client = client;
    /** The version of the last event yielded. */
    this.lastVersion = options.afterVersion ?? 0;
    /** How often the stream was opened again. */
    this.resumes = 0;
    this.maxFailures = options.maxFailures === undefined ? 10 : options.maxFailures;
    this.onEvent = options.onEvent ?? null;
    this.closed = false;
    /** @type {grpc.ClientReadableStream<E> | null} */
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

  /**
   * Open the server's stream of the events after `afterVersion`.
   * @param {number} _afterVersion
   * @returns {grpc.ClientReadableStream<E>}
   */
  open(_afterVersion) {
    throw new TypeError('a resuming stream says how to open its call');
  }

  /**
   * Whether a stream the server ended cleanly has carried everything: then the iteration
   * ends; otherwise the stream is opened again, as after a transient failure. A match's
   * Watch ends only after its last event; a subclass whose events say where the end is
   * checks it.
   * @returns {boolean}
   */
  complete() {
    return true;
  }

  /** Stop watching: the call is cancelled and the iteration ends. */
  close() {
    this.closed = true;
    this.stopping.abort();
    this.call?.cancel();
  }

  /** @returns {AsyncGenerator<E, void, undefined>} */
  async *run() {
    let failures = 0;
    while (!this.closed) {
      const call = this.open(this.lastVersion);
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
        if (this.complete()) return;
        // The server ended the stream cleanly, yet more is to come: a break, as any other.
        failure = new TotemError('UNAVAILABLE', 'the server ended the stream before its end');
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
    const exhausted = failure.code === 'RESOURCE_EXHAUSTED';
    if (failures === 1 && exhausted && failure.retryDelayMs === null) return 0; // it fell behind
    return pause(failures, failure);
  }
}

/**
 * The events of one match in version order, each exactly once, as an async iterable
 * (MatchService.Watch), resuming as ResumableStream says. It ends when the server ends
 * the stream (the match has ended and every event was sent), or on `close()`.
 * @extends {ResumableStream<MatchEvent>}
 */
export class EventStream extends ResumableStream {
  /**
   * @param {Client} client
   * @param {string} matchId
   * @param {WatchOptions} [options]
   */
  constructor(client, matchId, options = {}) {
    super(client, options);
    /** The client whose stub it watches through. */
    this.matches = client;
    this.matchId = matchId;
    this.token = options.token ?? null;
    this.omitState = options.omitState ?? false;
  }

  /**
   * @param {number} afterVersion
   * @returns {grpc.ClientReadableStream<MatchEvent>}
   */
  open(afterVersion) {
    return this.matches.stub.Watch(
      { match_id: this.matchId, after_version: afterVersion, omit_state: this.omitState },
      bearer(this.token),
    );
  }
}

class GapError extends Error {}

/**
 * @typedef {object} PlayOptions
 * @property {number} [seenVersion] as for Client.act (default 0)
 * @property {number | null} [seat] the token's own seat, if given
 * @property {string | null} [game] the game of a bare command (default Jungle Speed)
 */

/**
 * Commands for one token over one open Play stream (`MatchService.Play`).
 *
 * Why a stream: a command on a stream that is already open is receive-stamped the moment
 * the server reads its message, while an Act call is stamped only once gRPC has set the
 * call up, one call at a time. Grabs are decided by receive order (JS-5.1), so a player
 * who races for the totem, or who sends commands often, gets a tighter and fairer
 * receive order here. Everything else is Act's: `act` resolves to the ActResponse
 * `Client.act` would, and rejects with the same TotemError (code, rule, message,
 * errorInfo, retryDelayMs; `metadata` is null) for the same refusal; a refusal does not
 * end the stream.
 *
 * The server answers the requests in the order they were sent, so answers are matched to
 * commands by that order: `act` queues the command's answer and writes its request in
 * one synchronous step, so the queue is in write order, and concurrent `act`s each get
 * their own answer.
 *
 * When the stream itself ends with an error (UNAVAILABLE: the server shuts down, and the
 * commands it had not answered were not applied; RESOURCE_EXHAUSTED: the caller has too
 * many streams open; CANCELLED: `cancel()`), every command still waiting rejects with
 * it, and so does every later one (`failure`): open another stream to go on (a Session
 * does so by itself). A stream without a token, which the server ends at once with
 * UNAUTHENTICATED, is never written to.
 *
 * The first request of every stream is a ready request (`PlayRequest.ready`), no command:
 * gRPC hands the server a stream's first message sooner than its later ones, so a grab
 * that was its stream's first message would win close races against grabs on streams
 * already used (docs/performance.md). `opened()` resolves once it is answered.
 */
export class PlayStream {
  /**
   * @param {Client} client
   * @param {string} token
   */
  constructor(client, token) {
    this.client = client;
    this.token = token;
    /**
     * Why the stream ended, once it has ended with an error; null otherwise.
     * @type {TotemError | null}
     */
    this.failure = null;
    /** True once no more commands can go over it: closed, or ended. */
    this.done = false;
    /** @type {{resolve: (response: any) => void, reject: (error: TotemError) => void}[]} */
    this.waiting = [];
    /** @type {(failure: TotemError | null) => void} */
    let settle = () => {};
    /** @type {Promise<TotemError | null>} */
    this.finished = new Promise((resolve) => {
      settle = resolve;
    });
    this.settle = settle;
    this.isOver = false;
    this.call = client.stub.Play(bearer(token));
    this.call.on('data', (/** @type {Message} */ response) => this.answer(response));
    // The status below says it all; this keeps an error from being unhandled.
    this.call.on('error', () => {});
    this.call.on('status', (/** @type {grpc.StatusObject} */ status) =>
      this.end(status.code === grpc.status.OK ? null : TotemError.fromServiceError(status)),
    );
    /** @type {Promise<void>} */
    this.readied = token
      ? new Promise((resolve, reject) => {
          this.waiting.push({ resolve, reject });
          this.call.write({ ready: {} });
        })
      : this.finished.then(() => {
          throw this.refusal();
        });
    // Awaited by opened(), if at all: a stream that ends first says so to its commands.
    this.readied.catch(() => {});
  }

  /**
   * Resolves once the server has answered the stream's ready request: the stream is open
   * and a command sent now is not its first message. Rejects with the stream's refusal
   * (UNAUTHENTICATED without a token, RESOURCE_EXHAUSTED with too many streams open,
   * UNAVAILABLE while the server shuts down).
   * @returns {Promise<void>}
   */
  async opened() {
    try {
      await this.readied;
    } catch {
      throw this.refusal();
    }
  }

  /**
   * Send one command over the stream and wait for its answer; arguments and result as
   * Client.act (this stream's token acts). Rejects with a TotemError for a refused
   * command (the stream stays open) and for the end of the stream.
   * @param {string} matchId
   * @param {Command} command
   * @param {PlayOptions} [options]
   * @returns {Promise<ActResponse>}
   */
  async act(matchId, command, options = {}) {
    const request = { act: actRequest(matchId, command, options) };
    if (this.done) throw this.refusal();
    if (!this.token) {
      await this.finished; // the server ends a stream without a token at once: read why
      throw this.refusal();
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.call.write(request);
    });
  }

  /**
   * Send no more commands: the stream is half-closed, and this resolves once every
   * command already sent has its answer and the server has ended the stream, to why it
   * ended (null: cleanly). A command given afterwards rejects with CANCELLED.
   * @returns {Promise<TotemError | null>}
   */
  close() {
    if (!this.done) {
      this.done = true;
      this.call.end();
    }
    return this.finished;
  }

  /**
   * End the stream now: commands still waiting reject with CANCELLED (the server may
   * have applied those it had read already).
   * @returns {Promise<TotemError | null>}
   */
  cancel() {
    this.done = true;
    this.call.cancel();
    return this.finished;
  }

  /**
   * Resolves once the stream has ended (the server ended it, or it was closed or
   * cancelled), to why: `failure`, null after a clean close. A player who keeps a
   * stream open between commands learns here that it must open another.
   * @returns {Promise<TotemError | null>}
   */
  ended() {
    return this.finished;
  }

  /** @returns {TotemError} why no command can go over this stream */
  refusal() {
    const closed = 'this Play stream is closed: open another';
    return this.failure?.copy() ?? new TotemError('CANCELLED', closed);
  }

  /**
   * Hand an answer to the oldest waiting command.
   * @param {Message} response a PlayResponse
   */
  answer(response) {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.end(new TotemError('INTERNAL', 'the server answered no request'));
      this.call.cancel();
    } else if (response.outcome === 'applied') {
      next.resolve(this.client.kept(response.applied));
    } else if (response.outcome === 'refused') {
      next.reject(TotemError.fromStatus(response.refused));
    } else if (response.outcome === 'ready') {
      next.resolve(undefined);
    } else {
      next.reject(new TotemError('UNKNOWN', "the server's answer had no outcome"));
    }
  }

  /**
   * The stream is over: every command still waiting rejects with `failure` (or, after
   * a clean end, with an error saying it was not answered).
   * @param {TotemError | null} failure
   */
  end(failure) {
    if (this.isOver) return;
    this.isOver = true;
    this.done = true;
    this.failure = failure;
    const unanswered = 'the Play stream ended before this command was answered';
    const error = failure ?? new TotemError('UNKNOWN', unanswered);
    for (const waiting of this.waiting.splice(0)) waiting.reject(error.copy());
    this.settle(failure);
  }
}
