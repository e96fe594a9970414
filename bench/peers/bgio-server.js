// A boardgame.io server running the trivial game: in memory (boardgame.io's InMemory) or,
// given a PostgreSQL URI, on bgio-postgres (its PostgresStore, through Sequelize). Prints
// "listening PORT" once it accepts connections.
//
// What it stores before it answers: nothing. A move's update goes to the clients first
// (Master.onUpdate's transportAPI.sendAll), then the state and, with PostgreSQL, the
// metadata are written: two commits a move, after the answer.
const { Server } = require('boardgame.io/server');
const { Bench } = require('./game');

async function main() {
  const port = Number(process.argv[2] || 0);
  const uri = process.argv[3];
  let db;
  if (uri) {
    const { PostgresStore } = require('bgio-postgres');
    db = new PostgresStore(uri, { logging: false });
  }
  const server = Server({ games: [Bench], ...(db ? { db } : {}) });
  const { appServer } = await server.run({ port });
  console.log(`listening ${appServer.address().port}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
