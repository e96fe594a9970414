// Player tokens, kept per match in sessionStorage (never in the URL once read).

const PREFIX = 'totem-token:';

export function storedToken(matchId: string): string | undefined {
  return sessionStorage.getItem(PREFIX + matchId) ?? undefined;
}

export function storeToken(matchId: string, token: string): void {
  sessionStorage.setItem(PREFIX + matchId, token);
}

export function forgetToken(matchId: string): void {
  sessionStorage.removeItem(PREFIX + matchId);
}

/**
 * A token handed over in the link's fragment (`/match/<id>#token=...`): stored, and the
 * fragment removed from the address bar and history. Fragments never reach the server.
 */
export function takeTokenFromFragment(matchId: string): void {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const token = fragment.get('token');
  if (!token) return;
  storeToken(matchId, token);
  history.replaceState(history.state, '', window.location.pathname + window.location.search);
}
