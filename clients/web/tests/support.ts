// Helpers of the browser tests: a real `totem serve` (from the PATH, e.g. the project's
// venv) with a temporary store, serving this client's dist/ at `/` beside the Connect
// endpoint; bots (`totem bots`); Connect JSON calls for the test's own set-up and checks.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect, type Page } from '@playwright/test';

/** The organiser of every test server: only an organiser creates matches. */
export const ORGANISER_TOKEN = 'organiser-of-the-web-tests-0123456789abcdef0123456789ab';
/** Bound on waiting for a process line. */
const BOUND_MS = 60_000;

const here = path.dirname(fileURLToPath(import.meta.url));
export const DIST = path.resolve(here, '..', 'dist');

/** A running `totem serve --web`, with its store in a temporary directory. */
export class Server {
  private constructor(
    readonly child: ChildProcess,
    readonly dir: string,
    readonly grpcPort: number,
    readonly webPort: number,
    readonly lines: string[],
  ) {}

  /** The gRPC address, for `totem bots --address`. */
  get address(): string {
    return `127.0.0.1:${this.grpcPort}`;
  }

  /** Where the browser goes: the web port serves the pages and the Connect endpoint. */
  get url(): string {
    return `http://127.0.0.1:${this.webPort}`;
  }

  /** Start a server on a fresh store (or `dir`'s, to restart one), on free ports unless given. */
  static async start(options: { dir?: string; grpcPort?: number; webPort?: number } = {}): Promise<Server> {
    if (!existsSync(path.join(DIST, 'index.html'))) throw new Error(`no ${DIST}/index.html: run \`npm run build\` first`);
    const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'totem-web-'));
    const env: NodeJS.ProcessEnv = { ...process.env, TOTEM_ORGANISER_TOKEN: ORGANISER_TOKEN };
    // The store is the SQLite file given, whatever the environment says.
    delete env.PERSISTENCE_MODULE;
    delete env.POSTGRES_DBNAME;
    const args = [
      'serve',
      '--address', `127.0.0.1:${options.grpcPort ?? 0}`,
      '--web', `127.0.0.1:${options.webPort ?? 0}`,
      '--web-root', DIST,
      '--db', path.join(dir, 'totem.db'),
      '--key-file', path.join(dir, 'server.key'),
      '--organisers', path.join(dir, 'organisers'),
      '--drain-seconds', '0',
    ];
    const child = spawn('totem', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let grpcPort = 0;
    let webPort = 0;
    const ready = new Promise<void>((resolve, reject) => {
      const read = (chunk: string) => {
        for (const line of chunk.split('\n')) {
          if (!line) continue;
          lines.push(line);
          const web = /totem serving Connect for browsers on [^\s]+:(\d+)/.exec(line);
          if (web) webPort = Number(web[1]);
          const grpc = /totem serving on [^\s]+:(\d+) /.exec(line);
          if (grpc) grpcPort = Number(grpc[1]);
          if (grpcPort && webPort) resolve();
        }
      };
      child.stdout?.setEncoding('utf8').on('data', read);
      child.stderr?.setEncoding('utf8').on('data', read);
      child.on('error', reject);
      child.on('exit', (code, signal) => reject(new Error(`totem serve exited (${code ?? signal}):\n${lines.join('\n')}`)));
    });
    try {
      await bounded(ready, BOUND_MS, () => `totem serve not ready:\n${lines.join('\n')}`);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    return new Server(child, dir, grpcPort, webPort, lines);
  }

  /** Kill it at once (no drain): every connection drops. The store stays. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** Stop it cleanly. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM');
  }

  /** Stop it and remove its store. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The same store on the same ports, once this one has stopped. */
  restart(): Promise<Server> {
    return Server.start({ dir: this.dir, grpcPort: this.grpcPort, webPort: this.webPort });
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill(signal);
    await exited;
  }

  /** One Connect unary call in JSON (proto3 JSON names), as the browser's transport makes it. */
  async rpc<T = Record<string, any>>(method: string, body: object, token?: string): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(`${this.url}/totem.v1.MatchService/${method}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as T;
    if (!response.ok) throw new Error(`${method} refused: ${JSON.stringify(answer)}`);
    return answer;
  }

  /** A new match (as the organiser): its id and referee token. */
  createMatch(request: object): Promise<{ matchId: string; refereeToken: string }> {
    return this.rpc('CreateMatch', request, ORGANISER_TOKEN);
  }

  /** Take the next free seat: the seat and its token. */
  async join(matchId: string, name: string): Promise<{ seat: number; token: string }> {
    const answer = await this.rpc<{ seat?: number; playerToken: string }>('JoinMatch', { matchId, name, anySeat: true });
    return { seat: answer.seat ?? 0, token: answer.playerToken };
  }

  /** The match as a spectator sees it. */
  getMatch(matchId: string): Promise<Record<string, any>> {
    return this.rpc('GetMatch', { matchId });
  }

  /** Every match's summary, every page. */
  async listMatches(): Promise<Record<string, any>[]> {
    const all: Record<string, any>[] = [];
    let pageToken = '';
    do {
      const page = await this.rpc<{ matches?: Record<string, any>[]; nextPageToken?: string }>('ListMatches', { pageSize: 100, pageToken });
      all.push(...(page.matches ?? []));
      pageToken = page.nextPageToken ?? '';
    } while (pageToken);
    return all;
  }
}

/** A `totem bots GAME ...` run against `server`. */
export class Bots {
  readonly output: string[] = [];
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;

  constructor(server: Server, args: string[]) {
    const env: NodeJS.ProcessEnv = { ...process.env, TOTEM_ORGANISER_TOKEN: ORGANISER_TOKEN };
    this.child = spawn('totem', ['bots', ...args, '--address', server.address], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.output.push(chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.output.push(chunk));
    this.exited = once(this.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  }

  private readonly child: ChildProcess;

  /** Wait for the bots to finish; fail with their output unless they exit with 0. */
  async finished(): Promise<void> {
    const [code, signal] = await this.exited;
    if (code !== 0) throw new Error(`totem bots exited (${code ?? signal}):\n${this.output.join('')}`);
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}

/** The GAME_... name of a summary's game in proto3 JSON. */
export type GameName = 'GAME_JUNGLE_SPEED' | 'GAME_TRIBES' | 'GAME_VILLAGE';

/** Wait until the server lists a match of `game`; its id. */
export async function matchOf(server: Server, game: GameName): Promise<string> {
  let id = '';
  await expect.poll(async () => {
    id = (await server.listMatches()).find((m) => m.game === game)?.matchId ?? '';
    return id;
  }, { timeout: BOUND_MS }).not.toBe('');
  return id;
}

/** Placements as "seat:place" strings, sorted, from proto3 JSON (zeros are omitted there). */
export function placements(result: { seat?: number; place?: number }[] | undefined): string[] {
  return (result ?? []).map((p) => `${p.seat ?? 0}:${p.place ?? 0}`).sort();
}

/** The page's result, as placements(). */
export async function pagePlacements(page: Page): Promise<string[]> {
  const items = page.getByTestId('placement');
  const seats = await items.evaluateAll((elements) => elements.map((e) => `${e.getAttribute('data-seat')}:${e.getAttribute('data-place')}`));
  return seats.sort();
}

/** The versions in the page's event log, in the order shown. */
export function logVersions(page: Page): Promise<number[]> {
  return page.getByTestId('event').evaluateAll((elements) => elements.map((e) => Number(e.getAttribute('data-version'))));
}

/** 1, 2, ... n. */
export function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

async function bounded<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The match's events 1 to `upTo` as the server streams them (Watch, Connect protocol in
 * JSON), seen by the holder of `token` (none: a spectator).
 */
export async function serverEvents(server: Server, matchId: string, upTo: number, token?: string): Promise<Record<string, any>[]> {
  const json = new TextEncoder().encode(JSON.stringify({ matchId, omitState: true }));
  const body = new Uint8Array(5 + json.length);
  new DataView(body.buffer).setUint32(1, json.length);
  body.set(json, 5);
  const headers: Record<string, string> = { 'content-type': 'application/connect+json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const abort = new AbortController();
  const response = await fetch(`${server.url}/totem.v1.MatchService/Watch`, { method: 'POST', headers, body, signal: abort.signal });
  const reader = response.body!.getReader();
  const events: Record<string, any>[] = [];
  let buffered = new Uint8Array(0);
  try {
    for (;;) {
      while (buffered.length >= 5) {
        const size = new DataView(buffered.buffer, buffered.byteOffset).getUint32(1);
        if (buffered.length < 5 + size) break;
        const flags = buffered[0]!;
        const message = JSON.parse(new TextDecoder().decode(buffered.subarray(5, 5 + size)));
        buffered = buffered.subarray(5 + size);
        if (flags & 2) {
          if (message.error) throw new Error(`Watch ended: ${JSON.stringify(message.error)}`);
          return events;
        }
        events.push(message);
        if (Number(message.version) >= upTo) return events;
      }
      const { value, done } = await reader.read();
      if (done) return events;
      const joined = new Uint8Array(buffered.length + value.length);
      joined.set(buffered);
      joined.set(value, buffered.length);
      buffered = joined;
    }
  } finally {
    abort.abort();
  }
}

/** The buttons of the actions the page offers now. */
export const OFFERED = '[data-testid="controls"] button[data-testid^="action-"]:enabled';

/**
 * A person at the page: joins `matchId` by name as Ana (seat 0), seats a bot of `game` in
 * the other seat (`totem bots GAME --join`), then clicks one of the offered actions at
 * random (after `beforeClick`, e.g. ticking choices) until the page shows the end.
 * Returns the bots (to wait for) and how many clicks were taken.
 */
export async function playAgainstBot(
  page: Page,
  server: Server,
  matchId: string,
  game: string,
  thinkMs: [number, number],
  beforeClick: () => Promise<void> = async () => undefined,
): Promise<{ bots: Bots; clicks: number }> {
  await page.goto(`${server.url}/match/${matchId}`);
  await page.getByTestId('join-name').fill('Ana');
  await page.getByTestId('join-button').click();
  await expect(page.getByTestId('viewer')).toContainText('You play seat 0 (Ana)');
  // The bot takes the other seat, which starts the match.
  const bot = await server.join(matchId, 'Bot');
  const bots = new Bots(server, [game, '--join', matchId, '--token', bot.token, '--think-ms', String(thinkMs[0]), String(thinkMs[1])]);
  const offered = page.locator(OFFERED);
  const ended = page.locator('[data-testid="result"]:not([hidden])');
  let clicks = 0;
  try {
    for (;;) {
      // Wait for the page to offer something, or to show the end.
      await expect(page.locator(`${OFFERED}, [data-testid="result"]:not([hidden])`).first()).toBeVisible({ timeout: 120_000 });
      if (await ended.isVisible()) break;
      const choices = await offered.count();
      if (choices === 0) continue;
      await beforeClick();
      // The state may move on between the count and the click (a timer, the bot): then the
      // button is gone, and the loop looks again.
      await offered.nth(Math.floor(Math.random() * choices)).click({ timeout: 5_000 }).then(() => { clicks += 1; }, () => undefined);
    }
  } catch (error) {
    bots.stop();
    throw error;
  }
  return { bots, clicks };
}
