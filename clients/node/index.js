// Totem Arena's Node.js client: see README.md.
export {
  Client,
  DEFAULT_CALL_TIMEOUT_MS,
  EventStream,
  GRAB_TARGETS,
  RESUMABLE_CODES,
  Session,
  VARIANTS,
  commands,
  connect,
} from './lib/client.js';
export { TotemError, decodeErrorInfo } from './lib/errors.js';
export { OBJECT_OPTIONS, PROTOS_DIR, loadContract } from './lib/proto.js';
export { BotStats, JungleSpeedBot, playTable, seeded } from './bot.js';
