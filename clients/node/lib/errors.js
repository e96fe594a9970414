// The one error class of the client: a refusal or failure reported by gRPC.
//
// A refusal reaches the client two ways, and both become the same TotemError: a call
// that ends with a status (its code, its details, the `totem-rule` trailer and the
// `google.rpc.Status` in `grpc-status-details-bin`), and a Play stream's `refused`
// answer, which is that same `google.rpc.Status` as a message.
import grpc from '@grpc/grpc-js';

import { OBJECT_OPTIONS, loadContract } from './proto.js';

/** Trailing metadata key in which the server names the rule behind a refusal. */
export const RULE_METADATA_KEY = 'totem-rule';
/** Trailing metadata key of the rich status (`google.rpc.Status`, binary). */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';
/** Trailing metadata key with the milliseconds after which a refused call may succeed. */
export const RETRY_METADATA_KEY = 'grpc-retry-pushback-ms';
const ERROR_INFO_TYPE = 'google.rpc.ErrorInfo';
const RETRY_INFO_TYPE = 'google.rpc.RetryInfo';
const RULE_PREFIX = /^([A-Z]+-\d+(?:\.\d+)*): /;

/** gRPC status names and numbers: 'FAILED_PRECONDITION' <-> 9. */
const STATUS_NUMBERS = /** @type {Map<string, number>} */ (
  new Map(Object.entries(grpc.status).filter(([, number]) => typeof number === 'number'))
);
const STATUS_NAMES = new Map([...STATUS_NUMBERS].map(([name, number]) => [number, name]));

/**
 * `google.rpc.ErrorInfo`: why a call was refused.
 * @typedef {object} ErrorInfo
 * @property {string} reason the rule id (`"JS-3.1"`) or the status name
 * @property {string} domain `"totem.v1"`
 * @property {Record<string, string>} metadata `{ rule: "JS-3.1" }` for a rule's refusal
 */

/**
 * A call failed. `code` is the gRPC status name (`"FAILED_PRECONDITION"`), `status` its
 * number; `rule` is the rule id the server cited (`"JS-3.1"`), or `""` when the refusal
 * is not about the game's rules; `message` is the server's sentence without the rule id;
 * `errorInfo` is the `google.rpc.ErrorInfo` decoded from the `grpc-status-details-bin`
 * trailer (`null` if there was none); `retryDelayMs` is when the server said trying
 * again may succeed (a spent command rate, a server shutting down; `null`: it said
 * nothing); `metadata` holds the trailers (`null` for a refusal on a Play stream).
 */
export class TotemError extends Error {
  /**
   * @param {string} code a gRPC status name
   * @param {string} message the sentence, without the rule id
   * @param {{rule?: string, errorInfo?: ErrorInfo | null, retryDelayMs?: number | null,
   *   metadata?: grpc.Metadata | null, cause?: unknown}} [more]
   */
  constructor(
    code,
    message,
    { rule = '', errorInfo = null, retryDelayMs = null, metadata = null, cause } = {},
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'TotemError';
    /** @type {string} */
    this.code = code;
    /** @type {number} */
    this.status = STATUS_NUMBERS.get(code) ?? grpc.status.UNKNOWN;
    /** @type {string} */
    this.rule = rule;
    /** @type {ErrorInfo | null} */
    this.errorInfo = errorInfo;
    /** @type {number | null} */
    this.retryDelayMs = retryDelayMs;
    /** @type {grpc.Metadata | null} */
    this.metadata = metadata;
  }

  /** True when the rules refused a command (FAILED_PRECONDITION with a rule id): the
   * state did not allow it, nothing changed. */
  get isRuleRefusal() {
    return this.code === 'FAILED_PRECONDITION' && this.rule !== '';
  }

  toString() {
    return `${this.name}: ${this.code}: ${this.rule ? `${this.rule}: ` : ''}${this.message}`;
  }

  /**
   * Read the code, the rule id, the sentence and the ErrorInfo of a failed call.
   * @param {Partial<grpc.ServiceError>} error as grpc-js reports it
   * @returns {TotemError}
   */
  static fromServiceError(error) {
    const metadata = error.metadata ?? null;
    const status = richStatus(metadata);
    const errorInfo = status ? errorInfoOf(status) : null;
    const rule = firstText(metadata, RULE_METADATA_KEY) || errorInfo?.metadata?.rule || '';
    const pushback = firstText(metadata, RETRY_METADATA_KEY);
    const retryDelayMs = (status && retryDelayOf(status)) ?? (pushback ? Number(pushback) : null);
    return read(error.code, error.details ?? error.message ?? '', {
      rule,
      errorInfo,
      retryDelayMs,
      metadata,
      cause: error,
    });
  }

  /**
   * The error a `google.rpc.Status` describes: a Play stream's refusal of one command,
   * as decoded in `PlayResponse.refused`. It is the TotemError `fromServiceError` makes
   * of an Act call that ends with that same status (but for `metadata`: a stream's
   * answer has no trailers), so that a caller handles a refusal the same way whichever
   * way its command went.
   * @param {{code?: number, message?: string, details?: Array<{type_url: string,
   *   value: Uint8Array}>}} status
   * @returns {TotemError}
   */
  static fromStatus(status) {
    const errorInfo = errorInfoOf(status);
    return read(status.code, status.message ?? '', {
      rule: errorInfo?.metadata?.rule ?? '',
      errorInfo,
      retryDelayMs: retryDelayOf(status),
    });
  }

  /**
   * The same error as a new object: one failure (a stream's end) rejects every command
   * that waited on it, each with its own stack.
   * @returns {TotemError}
   */
  copy() {
    const { rule, errorInfo, retryDelayMs, metadata } = this;
    return new TotemError(this.code, this.message, { rule, errorInfo, retryDelayMs, metadata });
  }
}

/**
 * The error of a status: the rule id is the server's, else the message's prefix, which
 * the message loses when it names that rule.
 * @param {number | undefined} number the status code
 * @param {string} details
 * @param {{rule: string, errorInfo: ErrorInfo | null, retryDelayMs: number | null,
 *   metadata?: grpc.Metadata | null, cause?: unknown}} more
 * @returns {TotemError}
 */
function read(number, details, more) {
  const code = STATUS_NAMES.get(number ?? grpc.status.UNKNOWN) ?? 'UNKNOWN';
  let { rule } = more;
  const prefix = RULE_PREFIX.exec(details);
  if (prefix !== null) {
    rule ||= prefix[1];
    if (prefix[1] === rule) details = details.slice(prefix[0].length);
  }
  return new TotemError(code, details, { ...more, rule });
}

/**
 * @param {grpc.Metadata | null} metadata
 * @param {string} key
 * @returns {string}
 */
function firstText(metadata, key) {
  const [value] = metadata?.get(key) ?? [];
  if (value === undefined) return '';
  return typeof value === 'string' ? value : value.toString('utf8');
}

/**
 * The first `google.rpc.ErrorInfo` in the rich status of a failed call, or null.
 * @param {grpc.Metadata | null} metadata the trailers
 * @returns {ErrorInfo | null}
 */
export function decodeErrorInfo(metadata) {
  const status = richStatus(metadata);
  return status ? errorInfoOf(status) : null;
}

/**
 * @typedef {{details?: Array<{type_url: string, value: Uint8Array}>}} RichStatus
 */

/**
 * The `google.rpc.Status` of the `grpc-status-details-bin` trailer, or null.
 * @param {grpc.Metadata | null} metadata the trailers
 * @returns {RichStatus | null}
 */
function richStatus(metadata) {
  const [bytes] = metadata?.get(STATUS_DETAILS_KEY) ?? [];
  if (!Buffer.isBuffer(bytes)) return null;
  try {
    return /** @type {RichStatus} */ (loadContract().Status.decode(bytes));
  } catch {
    return null; // A malformed trailer is no reason to hide the error itself.
  }
}

/**
 * The first detail of `type` in a status, decoded as a plain object, or null.
 * @param {RichStatus} status
 * @param {string} type
 * @param {import('protobufjs').Type} decoder
 * @returns {Record<string, any> | null}
 */
function detailOf(status, type, decoder) {
  for (const detail of status.details ?? []) {
    if (String(detail.type_url).endsWith(`/${type}`)) {
      try {
        return decoder.toObject(decoder.decode(detail.value), OBJECT_OPTIONS);
      } catch {
        return null;
      }
    }
  }
  return null;
}

/**
 * @param {RichStatus} status
 * @returns {ErrorInfo | null}
 */
function errorInfoOf(status) {
  const info = detailOf(status, ERROR_INFO_TYPE, loadContract().ErrorInfo);
  return /** @type {ErrorInfo | null} */ (info);
}

/**
 * The milliseconds of the status's `google.rpc.RetryInfo`, or null without one.
 * @param {RichStatus} status
 * @returns {number | null}
 */
function retryDelayOf(status) {
  const retry = detailOf(status, RETRY_INFO_TYPE, loadContract().RetryInfo);
  if (retry === null) return null;
  const delay = retry.retry_delay ?? {};
  return Number(delay.seconds ?? 0) * 1000 + Math.round(Number(delay.nanos ?? 0) / 1e6);
}
