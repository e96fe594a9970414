// Totem Arena's Node.js client: see README.md.
export {
  BADGES,
  Client,
  DEFAULT_CALL_TIMEOUT_MS,
  DIE_FACES,
  EventStream,
  GAMES,
  GRAB_TARGETS,
  PlayStream,
  RESUMABLE_CODES,
  SPECIAL_TOTEMS,
  Session,
  VARIANTS,
  VILLAGE_SEXES,
  commands,
  connect,
  gameInfo,
  tribesCommands,
  villageCommands,
} from './lib/client.js';
export { TotemError, decodeErrorInfo } from './lib/errors.js';
export { instanceFor, instancesFor } from './lib/routing.js';
export { OBJECT_OPTIONS, PROTOS_DIR, loadContract } from './lib/proto.js';
export { RECEIPT_FORMAT, Receipts, receiptObject, writeReceipt } from './lib/receipts.js';
export { BotStats, JungleSpeedBot, playTable, seeded } from './bot.js';
export { playSeats } from './lib/table.js';
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
