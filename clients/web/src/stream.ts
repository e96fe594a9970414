// A match's Watch stream that survives drops: it resumes after the last version delivered,
// so that every event is delivered exactly once, in order, with no gap.
import type { GetMatchResponse, MatchEvent } from './gen/totem/v1/match_service_pb';
import { type MatchClient, refusalText, retryable } from './api';

/** Where the stream is: what the page's status line says. */
export type StreamStatus = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'failed';

export interface WatchHandlers {
  /** The next event: its version is always one more than the previous one's. */
  onEvent(event: MatchEvent): void;
  /** The stream skipped versions: the match as GetMatch says now, before the stream resumes. */
  onReload(match: GetMatchResponse): void;
  /** The stream's status changed (with the refusal's words for `failed`). */
  onStatus(status: StreamStatus, detail?: string): void;
}

const FIRST_DELAY_MS = 250;
const LONGEST_DELAY_MS = 8000;

/** Watch one match from `afterVersion`, reconnecting with backoff until it ends or is stopped. */
export class MatchWatch {
  private last: bigint;
  private stopped = false;
  private abort: AbortController | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: MatchClient,
    private readonly matchId: string,
    private readonly handlers: WatchHandlers,
    afterVersion = 0n,
  ) {
    this.last = afterVersion;
  }

  /** The version of the last event delivered. */
  get version(): bigint {
    return this.last;
  }

  /** Stop watching for good. */
  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
  }

  /** Run until the match ends, the stream is refused for good, or stop(). */
  async run(): Promise<void> {
    let delay = FIRST_DELAY_MS;
    let attempt = 0;
    while (!this.stopped) {
      this.handlers.onStatus(attempt === 0 ? 'connecting' : 'reconnecting');
      attempt += 1;
      const abort = new AbortController();
      this.abort = abort;
      let gap = false;
      try {
        const events = this.client.watch(
          { matchId: this.matchId, afterVersion: this.last },
          { signal: abort.signal, onHeader: () => this.handlers.onStatus('live') },
        );
        for await (const event of events) {
          if (event.version <= this.last) continue; // already delivered
          if (event.version !== this.last + 1n) {
            gap = true;
            break;
          }
          this.last = event.version;
          delay = FIRST_DELAY_MS;
          this.handlers.onEvent(event);
          if (event.event.case === 'matchEnded') {
            this.handlers.onStatus('ended');
            return;
          }
        }
      } catch (error) {
        if (this.stopped) return;
        if (!retryable(error)) {
          this.handlers.onStatus('failed', refusalText(error));
          return;
        }
      } finally {
        abort.abort();
      }
      if (this.stopped) return;
      if (gap) {
        // Never expected from the server; redraw from GetMatch, then fill the log again
        // from the last version delivered.
        try {
          this.handlers.onReload(await this.client.getMatch({ matchId: this.matchId }));
        } catch {
          // The stream's next attempt will report what is wrong.
        }
      }
      this.handlers.onStatus('reconnecting');
      await this.sleep(delay);
      delay = Math.min(delay * 2, LONGEST_DELAY_MS);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
