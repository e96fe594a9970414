// Totem Arena's Node.js client: see README.md.
export { Client, DEFAULT_CALL_TIMEOUT_MS, connect } from './lib/client.js';
export {
  BADGES,
  DIE_FACES,
  GAMES,
  GRAB_TARGETS,
  SPECIAL_TOTEMS,
  VARIANTS,
  VILLAGE_SEXES,
  commands,
  gameInfo,
  tribesCommands,
  villageCommands,
} from './lib/games.js';
export { EventStream, PlayStream, RESUMABLE_CODES, ResumableStream } from './lib/streams.js';
export { Session } from './lib/session.js';
export { TotemError, decodeErrorInfo } from './lib/errors.js';
export { instanceFor, instancesFor } from './lib/routing.js';
export { OBJECT_OPTIONS, PROTOS_DIR, loadContract } from './lib/proto.js';
export { RECEIPT_FORMAT, Receipts, receiptObject, writeReceipt } from './lib/receipts.js';
export { BotStats, JungleSpeedBot, playTable, seeded } from './bot.js';
export { playSeats } from './lib/table.js';
export {
  FORMATS,
  TIE_BREAKS,
  TOURNAMENT_SIGNATURE_PREFIX,
  TournamentClient,
  TournamentEventStream,
  connectTournaments,
  resultSheetMessage,
  verdicts,
} from './lib/tournament.js';
export { gameBot, playTournament } from './tournament-bot.js';
export {
  TribesBot,
  TribesBotStats,
  chooseMove,
  legalMoves,
  lines,
  playTribesTable,
} from './tribes-bot.js';
export { VillageBot, VillageBotStats, playVillageTable } from './village-bot.js';
export { arrangeCottages, bestCottage, decide, sameCommand } from './village-strategy.js';
