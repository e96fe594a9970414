// The match page (`/match/<id>`): the table drawn from the Watch stream's latest state, the
// event log in words, the end; with a player token, the legal actions of that state.
import { Code, ConnectError } from '@connectrpc/connect';

import { type MatchClient, matchClient, refusalText } from './api';
import { h, replace } from './dom';
import { type MatchSummary, MatchStatus, ViewerRole } from './gen/totem/v1/common_pb';
import type { GetMatchResponse, MatchEvent, MatchState } from './gen/totem/v1/match_service_pb';
import { gameLabel, gameModule } from './games';
import type { Command, PlayContext } from './games/types';
import { forgetToken, storedToken, storeToken, takeTokenFromFragment } from './session';
import { MatchWatch, type StreamStatus } from './stream';
import { reasonWords, resultWords, seatName, sortedResult, statusWords } from './words';

const STATUS_WORDS: Record<StreamStatus, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  ended: 'the match has ended',
  failed: 'stopped',
};

/** An event's kind: "playerJoined", or a game's "tribes.placed". */
function kindOf(event: MatchEvent): string {
  const inner = (event.event.value as { event?: { case?: string } } | undefined)?.event?.case;
  return inner ? `${event.event.case}.${inner}` : (event.event.case ?? '');
}

/** Draw the match page into `root`; returns what stops it. */
export function showMatch(root: HTMLElement, matchId: string): () => void {
  takeTokenFromFragment(matchId);
  let token = storedToken(matchId);
  let client: MatchClient = matchClient(token);
  let watch: MatchWatch | undefined;
  let summary: MatchSummary | undefined;
  let state: MatchState | undefined;
  let seat: number | undefined;
  /** When each version was drawn (performance.now()), for the reaction time of a command. */
  const drawnAt = new Map<bigint, number>();
  let shown = 0n;

  const title = h('h1', { 'data-testid': 'match-title' }, `Match ${matchId.slice(0, 8)}`);
  const streamStatus = h('p', { class: 'stream-status', role: 'status', 'aria-live': 'polite', 'data-testid': 'stream-status' }, 'connecting…');
  const facts = h('p', { 'data-testid': 'match-facts' });
  const who = h('p', { 'data-testid': 'viewer' });
  const headline = h('p', { class: 'headline', 'aria-live': 'polite', 'data-testid': 'headline' });
  const board = h('div', { class: 'board', 'data-testid': 'board' });
  const controls = h('div', { class: 'controls', 'data-testid': 'controls' });
  const refusal = h('p', { class: 'refusal', role: 'alert', 'data-testid': 'refusal' });
  const result = h('section', { class: 'result', 'aria-live': 'polite', 'data-testid': 'result', hidden: true });
  const join = h('form', { class: 'join', 'data-testid': 'join-form', hidden: true });
  const log = h('ol', { class: 'event-log', 'data-testid': 'event-log', 'aria-label': 'what happened' });
  const logBox = h('section', { class: 'log' }, h('h2', {}, 'What happened'), log);

  const name = (s: number) => seatName(summary, s);
  const module = () => (summary ? gameModule(summary.game) : undefined);

  const playContext = (): PlayContext | undefined =>
    seat === undefined ? undefined : { seat, name, act: (command) => void act(command), redraw: drawControls };

  /** The version drawn when the command in flight was sent: one command per state drawn. */
  let sentAt: bigint | undefined;

  async function act(command: Command): Promise<void> {
    if (seat === undefined || sentAt === shown) return;
    const seenVersion = shown;
    // The player's reaction: from the moment this page drew the event at seen_version to
    // the press, on this page's clock. Evidence for a judge; the server's order decides.
    const reactionMs = Math.max(0, Math.round(performance.now() - (drawnAt.get(seenVersion) ?? performance.now())));
    sentAt = seenVersion;
    setBusy(true);
    refusal.textContent = '';
    try {
      await client.act({ matchId, seenVersion, seat, command, reactionMs });
    } catch (error) {
      refusal.textContent = `Refused: ${refusalText(error)}`;
      if (sentAt === seenVersion) {
        sentAt = undefined;
        setBusy(false);
      }
    }
  }

  /** While a command is in flight, the controls of the state it was sent from are disabled. */
  function setBusy(busy: boolean): void {
    controls.dataset.busy = String(busy);
    for (const control of controls.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLSelectElement>('button, input, select')) {
      control.disabled = busy;
    }
  }

  function drawFacts(): void {
    if (!summary) return;
    title.textContent = `${gameLabel(summary.game)} match ${matchId.slice(0, 8)}`;
    facts.textContent = `${statusWords(summary.status)}; ${summary.players.length} of ${summary.maxPlayers} seats taken; version ${summary.version}${
      summary.variant ? `; variant ${summary.variant}` : ''
    }`;
    facts.dataset.status = MatchStatus[summary.status];
    who.textContent = seat === undefined ? 'You are watching as a spectator.' : `You play seat ${seat} (${name(seat)}).`;
    join.hidden = !(seat === undefined && summary.status === MatchStatus.WAITING);
  }

  function drawControls(): void {
    const context = playContext();
    const game = module();
    const offered = context && state && game ? game.controls(state, context) : null;
    replace(controls, offered);
    setBusy(sentAt !== undefined && sentAt === shown);
  }

  function drawState(next: MatchState): void {
    state = next;
    summary = next.summary ?? summary;
    const game = module();
    drawFacts();
    if (game) {
      replace(board, game.draw(next, { name }));
      headline.textContent = summary?.status === MatchStatus.ENDED ? '' : game.headline(next, { name });
    } else {
      replace(board, h('p', {}, 'This client cannot draw this game.'));
    }
    drawControls();
    drawResult();
  }

  function drawResult(): void {
    if (!summary || summary.status !== MatchStatus.ENDED) return;
    result.hidden = false;
    replace(
      result,
      h('h2', {}, 'The match has ended'),
      h('p', { 'data-testid': 'end-reason' }, `Why: ${reasonWords(summary.endReason)}.`),
      h('p', { 'data-testid': 'result-words' }, `Result: ${resultWords(summary.result, name)}.`),
      h(
        'ul',
        { class: 'placements' },
        sortedResult(summary.result).map((p) =>
          h('li', { 'data-testid': 'placement', 'data-seat': String(p.seat), 'data-place': String(p.place) }, `${p.place}. ${name(p.seat)}`),
        ),
      ),
    );
  }

  function describe(event: MatchEvent): string {
    const e = event.event;
    switch (e.case) {
      case 'playerJoined':
        return `${e.value.name} took seat ${e.value.seat}.`;
      case 'matchEnded':
        return `The match ended: ${reasonWords(e.value.reason)}${e.value.statement ? ` (“${e.value.statement}”)` : ''}. Result: ${resultWords(e.value.result, name)}.`;
      case 'tokenReissued':
        return `The referee gave seat ${e.value.seat} (${name(e.value.seat)}) a new token.`;
      case 'matchForked':
        return `This match was forked from match ${e.value.originMatchId.slice(0, 8)} at its version ${e.value.originVersion}.`;
      default:
        return module()?.describe(event, { name }) || 'Something happened that this page cannot word.';
    }
  }

  /** The newest event whose state is not drawn yet, and the frame that will draw it. */
  let pending: MatchEvent | undefined;
  let frame = 0;

  /** Draw the newest state once per frame: a stream catching up on a long match draws the
   * board once, not once per event, and the page shows its state sooner. The seat acts on
   * what it has been shown: `shown` and the time of drawing move only when it is drawn. */
  function drawPending(): void {
    frame = 0;
    const event = pending;
    pending = undefined;
    if (!event?.state) return;
    shown = event.version;
    drawState(event.state);
    drawnAt.set(event.version, performance.now());
  }

  function onEvent(event: MatchEvent): void {
    // Marks for measuring a page's first paint (bench/paint.mjs): the stream's first event.
    if (performance.getEntriesByName('totem:first-event').length === 0) performance.mark('totem:first-event');
    if (event.state) {
      // Its summary at once: the game it names words this event before the board is drawn.
      summary = event.state.summary ?? summary;
      pending = event;
      frame ||= requestAnimationFrame(drawPending);
    } else {
      shown = event.version;
      drawnAt.set(event.version, performance.now());
    }
    log.appendChild(
      h(
        'li',
        { 'data-testid': 'event', 'data-version': String(event.version), 'data-kind': kindOf(event) },
        h('span', { class: 'version' }, `${event.version}`),
        ' ',
        describe(event),
      ),
    );
    logBox.scrollTop = logBox.scrollHeight;
    log.dataset.version = String(event.version);
  }

  function onReload(match: GetMatchResponse): void {
    const game = match.state;
    if (game.case && match.summary) {
      drawState({ $typeName: 'totem.v1.MatchState', summary: match.summary, game } as MatchState);
    }
  }

  function onStatus(status: StreamStatus, detail?: string): void {
    streamStatus.textContent = `Stream: ${STATUS_WORDS[status]}${detail ? ` (${detail})` : ''}`;
    streamStatus.dataset.status = status;
  }

  async function start(): Promise<void> {
    watch?.stop();
    client = matchClient(token);
    seat = undefined;
    try {
      // A player's token is checked, and its seat learnt, before the stream opens; a
      // spectator needs neither, and the stream's first event carries the state.
      if (token) {
        const match = await client.getMatch({ matchId });
        performance.mark('totem:match-read');
        if (match.role === ViewerRole.PLAYER) seat = match.seat;
        onReload(match);
      }
    } catch (error) {
      if (token && ConnectError.from(error).code === Code.Unauthenticated) {
        // A token that is not this match's: watch as a spectator instead.
        forgetToken(matchId);
        token = undefined;
        refusal.textContent = `The token of this page was refused: ${refusalText(error)}`;
        return start();
      }
      onStatus('failed', refusalText(error));
      return;
    }
    log.replaceChildren();
    shown = 0n;
    drawnAt.clear();
    cancelAnimationFrame(frame);
    frame = 0;
    pending = undefined;
    watch = new MatchWatch(client, matchId, { onEvent, onReload, onStatus });
    void watch.run();
  }

  // Join with a name: the lowest free seat.
  const nameInput = h('input', { name: 'name', required: true, maxlength: '40', autocomplete: 'nickname', 'data-testid': 'join-name' });
  join.append(
    h('label', {}, 'Your name: ', nameInput),
    ' ',
    h('button', { type: 'submit', 'data-testid': 'join-button' }, 'Join (take a free seat)'),
  );
  join.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      try {
        const answer = await matchClient().joinMatch({ matchId, name: nameInput.value, place: { case: 'anySeat', value: true } });
        token = answer.playerToken;
        storeToken(matchId, token);
        await start();
      } catch (error) {
        refusal.textContent = `Could not join: ${refusalText(error)}`;
      }
    })();
  });

  function onKey(event: KeyboardEvent): void {
    const target = event.target as HTMLElement | null;
    if (target && ['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName)) return;
    const context = playContext();
    const game = module();
    if (context && state && game?.keyPressed?.(event, state, context)) event.preventDefault();
  }
  document.addEventListener('keydown', onKey);

  replace(
    root,
    h('p', {}, h('a', { href: '/', 'data-link': true }, '← All matches')),
    title,
    streamStatus,
    facts,
    who,
    join,
    refusal,
    result,
    headline,
    h('div', { class: 'match-layout' }, h('div', {}, board, controls), logBox),
  );
  void start();
  return () => {
    watch?.stop();
    document.removeEventListener('keydown', onKey);
  };
}
