// Jungle Speed: the piles, the totem and the pot, open duels and races, grabs on a key.
import { create } from '@bufbuild/protobuf';

import { button, h } from '../dom';
import { Game, MatchStatus } from '../gen/totem/v1/common_pb';
import {
  type Card,
  CardKind,
  Colour,
  GrabResolution,
  GrabTarget,
  type JungleSpeedCommand,
  JungleSpeedCommandSchema,
  type JungleSpeedEvent,
  type JungleSpeedState,
  JungleSpeedVariant,
  RevealCause,
  Shape,
} from '../gen/totem/v1/jungle_speed_pb';
import type { MatchEvent, MatchState } from '../gen/totem/v1/match_service_pb';
import { count, enumWords, list } from '../words';
import type { GameModule, PlayContext, ViewContext } from './types';

function stateOf(state: MatchState): JungleSpeedState | undefined {
  return state.game.case === 'jungleSpeed' ? state.game.value : undefined;
}

/** "purple pointed star", "inward arrows". */
export function cardWords(card: Card | undefined): string {
  if (!card) return 'no card';
  switch (card.kind) {
    case CardKind.INWARD_ARROWS:
      return 'inward-arrows card';
    case CardKind.OUTWARD_ARROWS:
      return 'outward-arrows card';
    case CardKind.COLOURED_ARROWS:
      return 'coloured-arrows card';
    default: {
      const [family = '', variant = ''] = (Shape[card.shape] ?? '').toLowerCase().split('_');
      return `${enumWords(Colour, card.colour)} ${variant} ${family}`.trim();
    }
  }
}

function article(words: string): string {
  return /^[aeiou]/.test(words) ? `an ${words}` : `a ${words}`;
}

function cardElement(card: Card | undefined): HTMLElement {
  if (!card) return h('div', { class: 'card empty', 'data-testid': 'card' }, 'empty');
  const colour = card.kind === CardKind.SYMBOL ? enumWords(Colour, card.colour) : 'special';
  return h('div', { class: `card colour-${colour}`, 'data-testid': 'card' }, cardWords(card));
}

function draw(state: MatchState, context: ViewContext): Node {
  const table = stateOf(state);
  if (!table) return h('p', {}, 'No Jungle Speed table in this state.');
  const inDuel = new Set(table.openDuels.flatMap((duel) => duel.seats));
  const seats = table.seats.map((seat) =>
    h(
      'section',
      {
        class: `js-seat${table.turn === seat.seat ? ' turn' : ''}${inDuel.has(seat.seat) ? ' duel' : ''}${seat.finished ? ' finished' : ''}`,
        'data-testid': `js-seat-${seat.seat}`,
        'aria-label': `${seat.name}'s piles`,
      },
      h('h3', {}, seat.name, table.turn === seat.seat ? ' (to reveal)' : ''),
      h('p', { 'data-testid': 'face-down' }, `${count(seat.faceDownCount, 'card')} face down`),
      h('p', {}, `${count(seat.faceUpCount, 'card')} face up; on top:`),
      cardElement(seat.top),
      seat.finished ? h('p', { class: 'finished-note' }, 'finished (JS-8.1)') : null,
    ),
  );
  const duels = table.openDuels.map((duel) =>
    h('li', { 'data-testid': 'open-duel' }, `Duel (JS-4.1): ${list(duel.seats.map((s) => context.name(s)))}`),
  );
  const centre = h(
    'section',
    { class: 'js-centre', 'data-testid': 'totem', 'aria-label': 'the totem' },
    h('div', { class: 'totem' }, 'Totem'),
    h('p', {}, `Pot under the totem: ${count(table.pot.length, 'card')}`),
    table.arrowsRaceOpen ? h('p', { class: 'race', 'data-testid': 'arrows-race' }, 'Inward arrows: race to grab! (JS-6.1)') : null,
    table.colouredMode ? h('p', {}, 'Coloured mode: duels match by colour (JS-6.3)') : null,
    table.outwardWaiting !== undefined
      ? h('p', {}, `Outward arrows of ${context.name(table.outwardWaiting)} wait for the next grab (JS-6.2)`)
      : null,
    duels.length ? h('ul', { class: 'duels' }, duels) : h('p', {}, 'No duel open.'),
  );
  return h('div', { class: 'js-table' }, centre, h('div', { class: 'js-seats' }, seats));
}

function headline(state: MatchState, context: ViewContext): string {
  const table = stateOf(state);
  if (!table || table.turn === undefined) return '';
  return `${context.name(table.turn)} reveals next`;
}

function describeGame(event: JungleSpeedEvent, context: ViewContext): string {
  const name = (seat: number) => context.name(seat);
  const e = event.event;
  switch (e.case) {
    case 'created': {
      const options = e.value.options;
      const variant = options ? JungleSpeedVariant[options.variant] : '';
      return `A Jungle Speed match was created (${variant}, ${options?.maxPlayers ?? '?'} seats).`;
    }
    case 'dealt':
      return `The cards were dealt (JS-2.1): ${list(e.value.faceDownCounts.map((n, seat) => `${name(seat)} ${n}`))}${
        e.value.pot.length ? `; ${count(e.value.pot.length, 'card')} face up in the pot` : ''
      }. ${name(e.value.firstTurn)} reveals first.`;
    case 'revealed':
      return `${name(e.value.seat)} revealed ${article(cardWords(e.value.card))}${
        e.value.cause === RevealCause.TIMEOUT ? ' (the turn timer revealed it, JS-3.4)' : ''
      }.`;
    case 'outwardReveal':
      return `Outward arrows of ${name(e.value.triggeredBy)}: everyone revealed at once (JS-6.2): ${list(
        e.value.reveals.map((r) => `${name(r.seat)} ${article(cardWords(r.card))}`),
      )}.`;
    case 'duelWon': {
      const tie = e.value.tie ? `, drawn among ${count(e.value.tie.contenders.length, 'simultaneous grab')} (JS-4.2a)` : '';
      const annulled = e.value.annulled.length ? ` The duel of ${list(e.value.annulled.map(name))} was annulled (JS-4.6).` : '';
      return `${name(e.value.winner)} grabbed the totem and won the duel against ${list(e.value.losers.map(name))} (JS-4.2)${tie}.${annulled}${e.value.arrowsAnnulled ? ' The arrows race was annulled (JS-4.7).' : ''}`;
    }
    case 'arrowsWon': {
      const tie = e.value.tie ? `, drawn among ${count(e.value.tie.contenders.length, 'simultaneous grab')} (JS-4.2a)` : '';
      return `${name(e.value.winner)} grabbed the totem first and won the inward-arrows race (JS-6.1)${tie}.`;
    }
    case 'wrongGrab':
      return `${name(e.value.seat)} grabbed the totem with no duel open: a wrong grab, taking the face-up piles and the pot (JS-5.2).`;
    case 'lateGrab':
      return `${name(e.value.seat)} grabbed too late: the race was decided at version ${e.value.decidedAtVersion} (JS-5.3).`;
    case 'pilesRecycled':
      return 'Nobody could reveal: every face-up pile was shuffled back face down (JS-3.4).';
    case 'playerFinished':
      return `${name(e.value.seat)} has no card left and finishes in place ${e.value.place} (JS-8.1).`;
    default:
      return 'Something happened that this page cannot word.';
  }
}

function describe(event: MatchEvent, context: ViewContext): string {
  return event.event.case === 'jungleSpeed' ? describeGame(event.event.value, context) : '';
}

function command(value: JungleSpeedCommand['command']) {
  return { case: 'jungleSpeed' as const, value: create(JungleSpeedCommandSchema, { command: value }) };
}

function grab(context: PlayContext, target: GrabTarget): void {
  context.act(command({ case: 'grab', value: { $typeName: 'totem.v1.JungleSpeedGrab', target } }));
}

/** What pressing the grab key now sends: the default of the grabs offered. */
function defaultTarget(table: JungleSpeedState): GrabTarget {
  return table.legal?.grabs[0]?.target ?? GrabTarget.UNSPECIFIED;
}

function controls(state: MatchState, context: PlayContext): Node | null {
  const table = stateOf(state);
  const legal = table?.legal;
  if (!table || !legal) return null;
  const mine = table.seats[context.seat];
  const items: Node[] = [];
  if (legal.start) {
    items.push(button('Start the match now (JS-1.5)', () => context.act(command({ case: 'start', value: { $typeName: 'totem.v1.JungleSpeedStart' } })), { 'data-testid': 'action-start' }));
  }
  if (legal.reveal) {
    items.push(button('Reveal your top card (JS-3.2)', () => context.act(command({ case: 'reveal', value: { $typeName: 'totem.v1.JungleSpeedReveal' } })), { 'data-testid': 'action-reveal' }));
  }
  const playing = state.summary?.status === MatchStatus.PLAYING;
  if (mine && !mine.finished && playing) {
    if (legal.grabs.length) {
      for (const option of legal.grabs) {
        const what =
          option.resolves === GrabResolution.ARROWS
            ? 'win the inward-arrows race (JS-6.1)'
            : `win the duel against ${list(option.opponents.map((s) => context.name(s)))} (JS-4.2)`;
        items.push(button(`Grab the totem: ${what}`, () => grab(context, option.target), { class: 'grab open', 'data-testid': 'action-grab' }));
      }
    } else {
      items.push(button('Grab the totem (nothing is open: a wrong grab, JS-5.2)', () => grab(context, GrabTarget.UNSPECIFIED), { class: 'grab', 'data-testid': 'grab-wrong' }));
    }
    items.push(h('p', { class: 'hint' }, 'Press the space bar to grab the totem.'));
  }
  return items.length ? h('div', { class: 'js-controls' }, items) : null;
}

function keyPressed(event: KeyboardEvent, state: MatchState, context: PlayContext): boolean {
  if (event.key !== ' ' || event.repeat) return false;
  const table = stateOf(state);
  const mine = table?.seats[context.seat];
  if (!table?.legal || !mine || mine.finished || state.summary?.status !== MatchStatus.PLAYING) return false;
  grab(context, defaultTarget(table));
  return true;
}

export const jungleSpeed: GameModule = {
  game: Game.JUNGLE_SPEED,
  key: 'jungleSpeed',
  label: 'Jungle Speed',
  draw,
  headline,
  describe,
  controls,
  keyPressed,
};
