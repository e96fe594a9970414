// Clients of the peer servers, driven by bench/peers.py. Usage:
//
//   node client.js bgio|colyseus PORT CLIENTS OPS_EACH WARMUP_EACH
//
// CLIENTS clients, each in a match or room of its own, connected before the clock starts,
// then all flat out, OPS_EACH operations each (a boardgame.io move, a Colyseus message),
// one at a time per client, each waiting for its result (the state update, the answer)
// after WARMUP_EACH untimed; one client is the sequential measurement. Prints one line of
// JSON: every operation's round trip in ms, and the wall time in ms from the first send
// to the last result.
const { performance } = require('node:perf_hooks');

/** A boardgame.io client in a match of its own; op() makes a move and resolves on the
 * state update that shows it. One subscriber per client: in boardgame.io 0.50 a
 * subscriber's id is the number of subscribers so far, so unsubscribing and
 * subscribing again per move overwrites a live subscriber. */
async function bgioClient(port, index) {
  const { Client } = require('boardgame.io/client');
  const { SocketIO } = require('boardgame.io/multiplayer');
  const { Bench } = require('./game');
  const client = Client({
    game: Bench,
    numPlayers: 1,
    matchID: `bench-${process.pid}-${index}-${Math.random().toString(36).slice(2)}`,
    playerID: '0',
    multiplayer: SocketIO({ server: `http://127.0.0.1:${port}` }),
    debug: false,
  });
  let seen = -1;
  let waiting = null; // [moves, resolve]
  client.subscribe((state) => {
    if (state === null) return;
    seen = state.G.moves;
    if (waiting !== null && seen >= waiting[0]) {
      const [, resolve] = waiting;
      waiting = null;
      resolve();
    }
  });
  client.start();
  await new Promise((resolve) => {
    if (seen >= 0) return resolve();
    waiting = [0, resolve];
  });
  return {
    op() {
      const target = seen + 1;
      return new Promise((resolve) => {
        waiting = [target, resolve];
        client.moves.bump();
      });
    },
    close() {
      client.stop();
    },
  };
}

/** A Colyseus client in a room of its own; op() sends "ping" and resolves on "pong". */
async function colyseusClient(port) {
  const { Client } = require('colyseus.js');
  const client = new Client(`ws://127.0.0.1:${port}`);
  const room = await client.create('echo');
  let counter = 0;
  let waiting = null; // [counter, resolve]
  room.onMessage('pong', (message) => {
    if (waiting !== null && message.n === waiting[0]) {
      const [, resolve] = waiting;
      waiting = null;
      resolve();
    }
  });
  return {
    op() {
      counter += 1;
      const n = counter;
      return new Promise((resolve) => {
        waiting = [n, resolve];
        room.send('ping', { n });
      });
    },
    close() {
      return room.leave();
    },
  };
}

async function connect(kind, port, index) {
  if (kind === 'bgio') return bgioClient(port, index);
  if (kind === 'colyseus') return colyseusClient(port);
  throw new Error(`unknown peer ${kind}`);
}

async function loop(client, ops, samples) {
  for (let i = 0; i < ops; i += 1) {
    const began = performance.now();
    await client.op();
    if (samples !== null) samples.push(performance.now() - began);
  }
}

async function main() {
  const [kind, ...numbers] = process.argv.slice(2);
  const [port, count, ops, warmup] = numbers.map(Number);
  const clients = [];
  for (let i = 0; i < count; i += 1) clients.push(await connect(kind, port, i));
  await Promise.all(clients.map((c) => loop(c, warmup, null)));
  const samples = [];
  const began = performance.now();
  await Promise.all(clients.map((c) => loop(c, ops, samples)));
  const result = { samples, wall_ms: performance.now() - began, clients: count };
  await Promise.all(clients.map((c) => c.close()));
  // Exit only once the line is written: a pipe takes it in 64 KiB pieces, asynchronously,
  // and the clients' open sockets would otherwise keep the process alive.
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
