// The trivial boardgame.io game both the server and its clients load: one player, one
// move that only the server runs (client: false), so that every move is a round trip
// to the server and back, as a command to our server is.
const Bench = {
  name: 'bench',
  setup: () => ({ moves: 0 }),
  moves: {
    bump: {
      move: ({ G }) => {
        G.moves += 1;
      },
      client: false,
    },
  },
};

module.exports = { Bench };
