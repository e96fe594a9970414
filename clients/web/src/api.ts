// Transport and clients of the MatchService, over the Connect protocol, at this page's origin.
import { Code, ConnectError, createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';

import { ErrorInfoSchema } from './gen/google/rpc/error_details_pb';
import { MatchService } from './gen/totem/v1/match_service_pb';

export type MatchClient = Client<typeof MatchService>;

/** Where the server answers: the page's own origin (`totem serve --web` serves both). */
export function baseUrl(): string {
  return window.location.origin;
}

/** A MatchService client; with a token, every call carries it as a bearer token. */
export function matchClient(token?: string): MatchClient {
  const interceptors: Interceptor[] = [];
  if (token) {
    interceptors.push((next) => async (request) => {
      request.header.set('authorization', `Bearer ${token}`);
      return next(request);
    });
  }
  const transport = createConnectTransport({ baseUrl: baseUrl(), useBinaryFormat: true, interceptors });
  return createClient(MatchService, transport);
}

/** A refusal as the server words it: the rule id and the sentence. */
export interface Refusal {
  code: string;
  rule: string;
  sentence: string;
}

/**
 * Read a refusal: its message is "<rule id>: <sentence>" (or just the sentence), and its
 * google.rpc.ErrorInfo names the rule in `metadata.rule`.
 */
export function refusal(error: unknown): Refusal {
  const connectError = ConnectError.from(error);
  const code = Code[connectError.code] ?? String(connectError.code);
  const message = connectError.rawMessage;
  let rule = '';
  for (const info of connectError.findDetails(ErrorInfoSchema)) {
    rule = info.metadata['rule'] ?? '';
    if (rule) break;
  }
  let sentence = message;
  const separator = message.indexOf(': ');
  if (separator > 0) {
    const head = message.slice(0, separator);
    if (!rule && /^[A-Z]{2}-[0-9][0-9.a-z]*$/.test(head)) rule = head;
    if (head === rule) sentence = message.slice(separator + 2);
  }
  return { code, rule, sentence };
}

/** A refusal in words: "JS-3.1: it is not your turn". */
export function refusalText(error: unknown): string {
  const { rule, sentence, code } = refusal(error);
  return rule ? `${rule}: ${sentence}` : `${sentence} (${code})`;
}

/** Whether trying the same stream again may succeed. */
export function retryable(error: unknown): boolean {
  const code = ConnectError.from(error).code;
  return ![Code.InvalidArgument, Code.NotFound, Code.OutOfRange, Code.PermissionDenied, Code.Unauthenticated, Code.Unimplemented].includes(code);
}
