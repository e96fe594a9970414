// The contract, loaded at run time from the repository's own protos/ directory.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/** The include root of the contract: the repository's `protos/` directory. */
export const PROTOS_DIR = fileURLToPath(new URL('../../../protos/', import.meta.url));

/**
 * How messages become JavaScript objects, for proto-loader and for the error details:
 * field names as in the .proto files (`match_id`), 64-bit integers as Numbers (exact for
 * versions and millisecond times), enums as their names, every field present (its
 * default when unset, `null` for an unset message), and for each oneof a property naming
 * the member that is set (`event.event === 'jungle_speed'`; `state._turn === 'turn'` for
 * a proto3 `optional` field that is set, which is then present).
 */
export const OBJECT_OPTIONS = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});

const SERVICE_FILES = ['totem/v1/match_service.proto', 'totem/v1/tournament_service.proto'];
const ERROR_FILES = ['google/rpc/status.proto', 'google/rpc/error_details.proto'];

/**
 * @typedef {object} Contract
 * @property {grpc.ServiceClientConstructor} MatchService the generated client class
 * @property {grpc.ServiceClientConstructor} TournamentService the generated client class
 * @property {protobuf.Type} Status `google.rpc.Status`
 * @property {protobuf.Type} ErrorInfo `google.rpc.ErrorInfo`
 * @property {protobuf.Type} RetryInfo `google.rpc.RetryInfo`
 */

/** @type {Map<string, Contract>} */
const loaded = new Map();

/**
 * The MatchService and TournamentService client classes and the rich error types,
 * loaded once per directory.
 * @param {string} [protosDir] the include root (default: the repository's `protos/`)
 * @returns {Contract}
 */
export function loadContract(protosDir = PROTOS_DIR) {
  let contract = loaded.get(protosDir);
  if (contract === undefined) {
    const definition = protoLoader.loadSync(SERVICE_FILES, {
      ...OBJECT_OPTIONS,
      includeDirs: [protosDir],
    });
    const services = /** @type {any} */ (grpc.loadPackageDefinition(definition));
    // proto-loader gives no decoder for plain messages: the error details are read with
    // protobufjs (which proto-loader is built on), from the same include root.
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => path.resolve(protosDir, target);
    root.loadSync(ERROR_FILES, { keepCase: true });
    contract = {
      MatchService: services.totem.v1.MatchService,
      TournamentService: services.totem.v1.TournamentService,
      Status: root.lookupType('google.rpc.Status'),
      ErrorInfo: root.lookupType('google.rpc.ErrorInfo'),
      RetryInfo: root.lookupType('google.rpc.RetryInfo'),
    };
    loaded.set(protosDir, contract);
  }
  return contract;
}
