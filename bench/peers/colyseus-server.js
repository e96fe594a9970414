// A Colyseus server (its core and WebSocket transport) with one room type that answers
// every "ping" message with a "pong" carrying the same payload. No state schema: the
// answer is the message itself. Prints "listening PORT" once it accepts connections.
const { Server, Room } = require('@colyseus/core');
const { WebSocketTransport } = require('@colyseus/ws-transport');

class EchoRoom extends Room {
  onCreate() {
    this.onMessage('ping', (client, message) => client.send('pong', message));
  }
}

async function main() {
  const port = Number(process.argv[2] || 0);
  const transport = new WebSocketTransport();
  const server = new Server({ transport, greet: false });
  server.define('echo', EchoRoom);
  await server.listen(port, '127.0.0.1');
  console.log(`listening ${transport.server.address().port}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
