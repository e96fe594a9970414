// Helpers of the tests: a real `totem serve` in a subprocess, with a temporary store.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import grpc from '@grpc/grpc-js';

import { connect } from '../index.js';

/** The organiser of every test server: only an organiser creates matches. */
export const ORGANISER_TOKEN = 'organiser-of-the-node-tests-0123456789abcdef0123456789';

/**
 * Jungle Speed's `specials` for a deck of symbol cards only: no reveal adds events, opens
 * a race or waits for a grab, whatever the deal.
 */
export const NO_SPECIALS = Object.freeze({ inward_arrows: 0, outward_arrows: 0, coloured_arrows: 0 });

/** Bound on a single wait, so that a broken test fails instead of hanging. */
export const BOUND_MS = 60_000;
const READY = /totem serving on [^\s]+:(\d+) /;

/** A running `totem serve`. */
export class Server {
  /**
   * @param {import('node:child_process').ChildProcess} child
   * @param {number} port
   * @param {string} db
   */
  constructor(child, port, db) {
    this.child = child;
    this.port = port;
    this.db = db;
    this.address = `127.0.0.1:${port}`;
    this.exited = once(child, 'exit');
  }

  /**
   * Start `totem serve --address 127.0.0.1:PORT --db DB` (port 0: a free one) and wait
   * for the line that says it is ready.
   * @param {string} db
   * @param {number} [port]
   * @returns {Promise<Server>}
   */
  static async start(db, port = 0) {
    const env = { ...process.env };
    // The store is the SQLite file given, whatever the environment says.
    delete env.PERSISTENCE_MODULE;
    delete env.POSTGRES_DBNAME;
    env.TOTEM_ORGANISER_TOKEN = ORGANISER_TOKEN;
    const child = spawn('totem', ['serve', '--address', `127.0.0.1:${port}`, '--db', db], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    /** @type {string[]} */
    const lines = [];
    const ready = new Promise((resolve, reject) => {
      let buffered = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (/** @type {string} */ chunk) => {
        buffered += chunk;
        let end;
        while ((end = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 1);
          lines.push(line);
          const match = READY.exec(line);
          if (match) resolve(Number(match[1]));
        }
      });
      child.on('error', reject);
      child.on('exit', (code, signal) =>
        reject(new Error(`totem serve exited (${code ?? signal}):\n${lines.join('\n')}`)),
      );
    });
    try {
      const readyPort = await bounded(ready);
      return new Server(child, /** @type {number} */ (readyPort), db);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  /** Stop it with SIGTERM (a clean shutdown) and wait until it has exited. */
  async stop() {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), BOUND_MS);
      await this.exited;
      clearTimeout(timer);
    }
  }
}

/**
 * A fresh server with a store of its own, and a client of it, both stopped after the test.
 * @param {import('node:test').TestContext} t
 * @param {{clientOptions?: Parameters<typeof connect>[1]}} [options]
 */
export async function serverFor(t, options = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'totem-node-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const server = await Server.start(path.join(dir, 'totem.db'));
  t.after(() => server.stop());
  const client = connect(server.address, {
    organiserToken: ORGANISER_TOKEN,
    ...options.clientOptions,
  });
  t.after(() => client.close());
  return { server, client, dir };
}

/**
 * A client interceptor that records the path of every call made through it.
 * @param {string[]} paths
 * @returns {grpc.Interceptor}
 */
export function recordCalls(paths) {
  return (options, nextCall) => {
    paths.push(options.method_definition.path);
    return new grpc.InterceptingCall(nextCall(options));
  };
}

/**
 * Read a stream's events until one has version `version` or more.
 * @param {AsyncIterator<Record<string, any>>} events
 * @param {number} version
 */
export async function collectUntil(events, version) {
  const seen = [];
  for (;;) {
    const next = await events.next();
    if (next.done) return seen;
    seen.push(next.value);
    if (next.value.version >= version) return seen;
  }
}

/**
 * The name of an event: a common event or a Jungle Speed one.
 * @param {Record<string, any>} event
 */
export function kind(event) {
  return event.event === 'jungle_speed' ? event.jungle_speed.event : event.event;
}

/**
 * Fail after BOUND_MS instead of hanging.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} [ms]
 * @returns {Promise<T>}
 */
export function bounded(promise, ms = BOUND_MS) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  const raced = Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  return /** @type {Promise<T>} */ (raced);
}
