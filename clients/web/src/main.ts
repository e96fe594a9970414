// Client-side routes (history API): `/` the lobby, `/match/<id>` a match.
import { showLobby } from './lobby';
import { showMatch } from './match';

const root = document.getElementById('app') as HTMLElement;
let stop: (() => void) | undefined;

function route(): void {
  stop?.();
  const path = window.location.pathname;
  const match = /^\/match\/([^/]+)\/?$/.exec(path);
  stop = match ? showMatch(root, decodeURIComponent(match[1]!)) : showLobby(root);
}

document.addEventListener('click', (event) => {
  const link = (event.target as Element | null)?.closest('a[data-link]');
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  history.pushState(null, '', (link as HTMLAnchorElement).href);
  route();
});
window.addEventListener('popstate', route);
route();
