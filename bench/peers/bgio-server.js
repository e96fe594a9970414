// A boardgame.io server, in memory (no storage given: boardgame.io's InMemory), running
// the trivial game. Prints "listening PORT" once it accepts connections.
const { Server } = require('boardgame.io/server');
const { Bench } = require('./game');

async function main() {
  const port = Number(process.argv[2] || 0);
  const server = Server({ games: [Bench] });
  const { appServer } = await server.run({ port });
  console.log(`listening ${appServer.address().port}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
