// The lobby (`/`): every match, a page at a time (ListMatches), refreshed on demand or
// every few seconds; each opens its match page.
import { h, replace, button } from './dom';
import { matchClient, refusalText } from './api';
import { Game, type MatchSummary, MatchStatus } from './gen/totem/v1/common_pb';
import { gameLabel } from './games';
import { list, resultWords, seatName, statusWords } from './words';

const PAGE_SIZE = 20;
const REFRESH_MS = 5000;

/** Draw the lobby into `root`; returns what stops it. */
export function showLobby(root: HTMLElement): () => void {
  const client = matchClient();
  const pageTokens: string[] = ['']; // the token of each page seen, the current one last
  let game = Game.UNSPECIFIED;
  let status = MatchStatus.UNSPECIFIED;
  let nextToken = '';
  let timer: ReturnType<typeof setInterval> | undefined;

  const rows = h('tbody', { 'data-testid': 'match-rows' });
  const note = h('p', { role: 'status', 'aria-live': 'polite', 'data-testid': 'lobby-status' });
  const previous = button('Previous page', () => { pageTokens.pop(); void load(); }, { 'data-testid': 'previous-page' });
  const next = button('Next page', () => { pageTokens.push(nextToken); void load(); }, { 'data-testid': 'next-page' });
  const auto = h('input', { type: 'checkbox', checked: true, 'data-testid': 'auto-refresh' });
  const gameFilter = h(
    'select',
    { 'aria-label': 'game', onchange: () => { game = Number(gameFilter.value) as Game; restart(); } },
    h('option', { value: String(Game.UNSPECIFIED) }, 'every game'),
    [Game.JUNGLE_SPEED, Game.TRIBES, Game.VILLAGE].map((g) => h('option', { value: String(g) }, gameLabel(g))),
  );
  const statusFilter = h(
    'select',
    { 'aria-label': 'status', onchange: () => { status = Number(statusFilter.value) as MatchStatus; restart(); } },
    h('option', { value: String(MatchStatus.UNSPECIFIED) }, 'any status'),
    [MatchStatus.WAITING, MatchStatus.PLAYING, MatchStatus.ENDED].map((s) => h('option', { value: String(s) }, statusWords(s))),
  );

  function restart(): void {
    pageTokens.splice(0, pageTokens.length, '');
    void load();
  }

  function row(match: MatchSummary): HTMLElement {
    const name = (seat: number) => seatName(match, seat);
    return h(
      'tr',
      { 'data-testid': 'match-row', 'data-match-id': match.matchId },
      h('td', {}, h('a', { href: `/match/${match.matchId}`, 'data-link': true, 'data-testid': 'match-link' }, `${gameLabel(match.game)} ${match.matchId.slice(0, 8)}`)),
      h('td', { 'data-testid': 'match-status' }, statusWords(match.status)),
      h('td', {}, `${match.players.length}/${match.maxPlayers}: ${list(match.players.map((p) => p.name))}`),
      h('td', {}, String(match.version)),
      h('td', {}, match.status === MatchStatus.ENDED ? resultWords(match.result, name) : ''),
    );
  }

  async function load(): Promise<void> {
    note.textContent = 'Loading…';
    try {
      const answer = await client.listMatches({ pageSize: PAGE_SIZE, pageToken: pageTokens[pageTokens.length - 1] ?? '', game, status });
      nextToken = answer.nextPageToken;
      replace(rows, answer.matches.length ? answer.matches.map(row) : h('tr', {}, h('td', { colspan: '5' }, 'No match here.')));
      previous.disabled = pageTokens.length <= 1;
      next.disabled = !nextToken;
      note.textContent = `Page ${pageTokens.length}: ${answer.matches.length} matches, updated ${new Date().toLocaleTimeString()}.`;
    } catch (error) {
      note.textContent = `Could not list the matches: ${refusalText(error)}`;
    }
  }

  replace(
    root,
    h('h1', {}, 'Matches'),
    h(
      'div',
      { class: 'toolbar' },
      gameFilter,
      statusFilter,
      button('Refresh', () => void load(), { 'data-testid': 'refresh' }),
      h('label', {}, auto, ' refresh every 5 s'),
    ),
    note,
    h(
      'table',
      { class: 'matches' },
      h('thead', {}, h('tr', {}, ['Match', 'Status', 'Players', 'Version', 'Result'].map((t) => h('th', { scope: 'col' }, t)))),
      rows,
    ),
    h('div', { class: 'pager' }, previous, next),
  );
  void load();
  timer = setInterval(() => {
    if (auto.checked) void load();
  }, REFRESH_MS);
  return () => clearInterval(timer);
}
