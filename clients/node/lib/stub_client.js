// What every client of one service on one channel has: the generated stub, the
// organiser token, the call timeout, closing, waiting for the connection and one unary
// call with its bearer token. Client (MatchService) and TournamentClient extend it.
import grpc from '@grpc/grpc-js';

import { bearer } from './calls.js';
import { TotemError } from './errors.js';
import { channelOptions } from './reconnect.js';

/**
 * @typedef {import('./messages.js').Message} Message
 * @typedef {import('./client.js').ClientOptions} ClientOptions
 */

/** How long a unary call may take by default (ms). */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

export class StubClient {
  /**
   * @param {any} Service the generated service constructor
   * @param {string} address
   * @param {ClientOptions} [options]
   */
  constructor(Service, address, options = {}) {
    this.address = address;
    this.organiserToken = options.organiserToken ?? null;
    this.callTimeoutMs =
      options.callTimeoutMs === undefined ? DEFAULT_CALL_TIMEOUT_MS : options.callTimeoutMs;
    this.closed = false;
    /** The generated stub, for anything a client does not wrap. */
    this.stub = new Service(
      address,
      options.credentials ?? grpc.credentials.createInsecure(),
      channelOptions(options.channelOptions),
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
   * One unary call of the service, within the call timeout unless `bounded` is false (a
   * call the server answers when something happens, such as TakeSeat).
   * @param {string} method the service's method name
   * @param {Message} request
   * @param {string | null} [token]
   * @param {{bounded?: boolean}} [options]
   * @returns {Promise<any>}
   */
  unary(method, request, token = null, { bounded = true } = {}) {
    /** @type {grpc.CallOptions} */
    const options = {};
    if (bounded && this.callTimeoutMs !== null) {
      options.deadline = Date.now() + this.callTimeoutMs;
    }
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
}
