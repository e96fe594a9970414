// The one error class of the client: a refusal or failure reported by gRPC.
import grpc from '@grpc/grpc-js';

import { OBJECT_OPTIONS, loadContract } from './proto.js';

/** Trailing metadata key in which the server names the rule behind a refusal. */
export const RULE_METADATA_KEY = 'totem-rule';
/** Trailing metadata key of the rich status (`google.rpc.Status`, binary). */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';
const ERROR_INFO_TYPE = 'google.rpc.ErrorInfo';
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
 * trailer (`null` if there was none); `metadata` holds the trailers.
 */
export class TotemError extends Error {
  /**
   * @param {string} code a gRPC status name
   * @param {string} message the sentence, without the rule id
   * @param {{rule?: string, errorInfo?: ErrorInfo | null,
   *   metadata?: grpc.Metadata | null, cause?: unknown}} [more]
   */
  constructor(code, message, { rule = '', errorInfo = null, metadata = null, cause } = {}) {
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
    const code = STATUS_NAMES.get(error.code ?? grpc.status.UNKNOWN) ?? 'UNKNOWN';
    const metadata = error.metadata ?? null;
    let details = error.details ?? error.message ?? '';
    const errorInfo = decodeErrorInfo(metadata);
    let rule = firstText(metadata, RULE_METADATA_KEY) || errorInfo?.metadata?.rule || '';
    const prefix = RULE_PREFIX.exec(details);
    if (prefix !== null) {
      rule ||= prefix[1];
      if (prefix[1] === rule) details = details.slice(prefix[0].length);
    }
    return new TotemError(code, details, { rule, errorInfo, metadata, cause: error });
  }
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
  const [bytes] = metadata?.get(STATUS_DETAILS_KEY) ?? [];
  if (!Buffer.isBuffer(bytes)) return null;
  const { Status, ErrorInfo } = loadContract();
  try {
    const status = /** @type {any} */ (Status.decode(bytes));
    for (const detail of status.details ?? []) {
      if (String(detail.type_url).endsWith(`/${ERROR_INFO_TYPE}`)) {
        const info = ErrorInfo.toObject(ErrorInfo.decode(detail.value), OBJECT_OPTIONS);
        return /** @type {ErrorInfo} */ (info);
      }
    }
  } catch {
    // A malformed trailer is no reason to hide the error itself.
  }
  return null;
}
