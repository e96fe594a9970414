// Coming back after the server went away (a restart, a crash, a deploy): the channel
// tries to connect again soon, a retry waits what the server said, and streams resume.

/**
 * Channel options for connection backoff, which `connect()` sets unless given: the
 * first attempt after a failure comes 0.1 s later and the pause never exceeds 1 s.
 * grpc-js's default grows to 120 s, so a client of a server that was down for half a
 * minute would go on failing for seconds after the server was back.
 * @type {Readonly<Record<string, number>>}
 */
export const CHANNEL_OPTIONS = Object.freeze({
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
});

/** The pause after the first transient failure with no hint from the server. */
export const FIRST_PAUSE_MS = 50;
/** The longest pause with no hint: as long as the channel's longest backoff. */
export const LONGEST_PAUSE_MS = 1000;
/**
 * Transient failures in a row after which the bots and a bot's watch stream give up:
 * with pauses of a second at most, the server has been away for about two minutes at
 * least (longer when its hints say to wait longer).
 */
export const PATIENCE = 120;

/**
 * The caller's channel options, with CHANNEL_OPTIONS for each key they do not set.
 * @param {Record<string, any>} [given]
 * @returns {Record<string, any>}
 */
export function channelOptions(given = {}) {
  return { ...CHANNEL_OPTIONS, ...given };
}

/**
 * Milliseconds to wait before trying again after `failures` transient failures in a row,
 * the last one `error`: the delay the server gave with it (its RetryInfo), else 50 ms
 * doubling up to LONGEST_PAUSE_MS.
 * @param {number} failures
 * @param {{retryDelayMs?: number | null} | null} [error]
 * @returns {number}
 */
export function pause(failures, error = null) {
  if (error?.retryDelayMs !== null && error?.retryDelayMs !== undefined) {
    return Math.max(error.retryDelayMs, 0);
  }
  return Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.max(failures - 1, 0));
}
