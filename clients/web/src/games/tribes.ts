// Tribes: the board of stacks (each stack's top), the tribes' mats and badges, whose turn,
// and moves built from the legal lifts and places.
import { create } from '@bufbuild/protobuf';

import { button, h } from '../dom';
import { Game } from '../gen/totem/v1/common_pb';
import type { MatchEvent, MatchState } from '../gen/totem/v1/match_service_pb';
import {
  TribesBadge,
  type TribesCommand,
  TribesCommandSchema,
  TribesDieFace,
  TribesDrawKind,
  type TribesEvent,
  type TribesLine,
  TribesMoveCause,
  type TribesPlaceOption,
  TribesPlaceSource,
  type TribesState,
  type TribesTotem,
  TribesTotemKind,
  TribesWinKind,
} from '../gen/totem/v1/tribes_pb';
import { enumWords, list } from '../words';
import type { GameModule, PlayContext, ViewContext } from './types';

function stateOf(state: MatchState): TribesState | undefined {
  return state.game.case === 'tribes' ? state.game.value : undefined;
}

function totemWords(totem: TribesTotem | undefined, context: ViewContext): string {
  if (!totem) return 'nothing';
  switch (totem.kind) {
    case TribesTotemKind.DOOM:
      return 'the Great Totem of Doom';
    case TribesTotemKind.MINI:
      return 'the Mini-Totem of Chaos';
    default:
      return `${context.name(totem.seat)}'s ${totem.size === 5 ? 'Grand Chief (5)' : `totem ${totem.size}`}`;
  }
}

function totemElement(totem: TribesTotem | undefined, context: ViewContext): HTMLElement | null {
  if (!totem) return null;
  if (totem.kind !== TribesTotemKind.TRIBE) {
    return h('span', { class: `totem-piece special` }, totem.kind === TribesTotemKind.DOOM ? 'Doom' : 'Mini');
  }
  return h(
    'span',
    { class: `totem-piece seat-${totem.seat}`, title: totemWords(totem, context) },
    `${context.name(totem.seat).slice(0, 6)} ${totem.size}`,
  );
}

function spaceWords(board: number, space: number): string {
  if (!board) return `space ${space}`;
  return `row ${Math.floor(space / board) + 1}, column ${(space % board) + 1}`;
}

function lineWords(line: TribesLine, board: number): string {
  return list(line.spaces.map((s) => spaceWords(board, s)));
}

function draw(state: MatchState, context: ViewContext): Node {
  const table = stateOf(state);
  if (!table) return h('p', {}, 'No Tribes board in this state.');
  const size = table.boardSize;
  const board = h(
    'div',
    { class: 'tribes-board', style: `grid-template-columns: repeat(${size || 1}, 1fr)`, 'data-testid': 'tribes-board', role: 'list', 'aria-label': 'the board, row by row' },
    table.spaces.map((space) =>
      h(
        'div',
        {
          class: `tribes-space${space.salvation ? ' salvation' : ''}${table.lifted?.origin === space.space ? ' origin' : ''}`,
          role: 'listitem',
          'data-testid': `tribes-space-${space.space}`,
          'aria-label': `${spaceWords(size, space.space)}: ${totemWords(space.top, context)}`,
        },
        totemElement(space.top, context),
        space.stack.length > 1 ? h('span', { class: 'height' }, `height ${space.stack.length}`) : null,
        space.salvation ? h('span', { class: 'salvation-mark' }, 'salvation') : null,
      ),
    ),
  );
  const seats = table.seats.map((seat) =>
    h(
      'section',
      { class: `tribes-seat seat-${seat.seat}${table.turn === seat.seat ? ' turn' : ''}`, 'data-testid': `tribes-seat-${seat.seat}` },
      h('h3', {}, seat.name, table.turn === seat.seat ? ' (to move)' : ''),
      h('p', {}, `Mat (TR-1.3): ${seat.mat.length ? seat.mat.join(', ') : 'empty'}`),
      h('p', {}, `Badges (TR-3.4): ${seat.badges.length ? seat.badges.map((b) => enumWords(TribesBadge, b)).join(', ') : 'none'}`),
      seat.card ? h('p', {}, `Card of Truth: ${seat.card}`) : null,
      seat.penalised ? h('p', {}, 'Penalised for coaching (TR-4.1)') : null,
    ),
  );
  const facts = h(
    'ul',
    { class: 'facts' },
    table.round ? h('li', {}, `Round ${table.round}; moves this round: ${table.moves}; passes in a row: ${table.passes}`) : null,
    table.order.length ? h('li', {}, `Turn order: ${list(table.order.map((s) => context.name(s)))}`) : null,
    table.die !== TribesDieFace.UNSPECIFIED ? h('li', {}, `Dice of Fate: ${enumWords(TribesDieFace, table.die)}`) : null,
    table.lifted
      ? h('li', {}, `Lifted: ${totemWords(table.lifted.totem, context)} from ${spaceWords(size, table.lifted.origin)}`)
      : null,
    table.beside.length ? h('li', {}, `Beside the board: ${table.beside.map((t) => totemWords(t, context)).join(', ')}`) : null,
  );
  return h('div', { class: 'tribes-table' }, board, h('div', { class: 'tribes-side' }, facts, seats));
}

function headline(state: MatchState, context: ViewContext): string {
  const table = stateOf(state);
  return table?.turn === undefined ? '' : `${context.name(table.turn)} to move`;
}

function cause(value: TribesMoveCause): string {
  return value === TribesMoveCause.TIMEOUT ? ' (the turn timer moved)' : '';
}

function describeGame(event: TribesEvent, context: ViewContext, board: number): string {
  const name = (seat: number) => context.name(seat);
  const e = event.event;
  switch (e.case) {
    case 'created':
      return `A Tribes match was created (${e.value.options?.extended ? 'extended' : 'base'} game).`;
    case 'started':
      return `Play began on a ${e.value.boardSize}×${e.value.boardSize} board (TR-1.2).`;
    case 'roundStarted':
      return `Round ${e.value.round} began (TR-2.1): turn order ${list(e.value.order.map(name))}.`;
    case 'dieRolled':
      return `${name(e.value.seat)} rolled ${enumWords(TribesDieFace, e.value.face)} (TR-5.1).`;
    case 'lifted':
      return `${name(e.value.seat)} lifted ${totemWords(e.value.totem, context)} from ${spaceWords(board, e.value.space)}${
        e.value.uncovered ? `, uncovering ${totemWords(e.value.uncovered, context)}` : ''
      }${e.value.revealedLines.length ? `, revealing a line (TR-3.2)` : ''}${cause(e.value.cause)}.`;
    case 'placed':
      return `${name(e.value.seat)} placed ${totemWords(e.value.totem, context)} on ${spaceWords(board, e.value.destination)}${
        e.value.covered ? `, covering ${totemWords(e.value.covered, context)}` : ''
      }${e.value.origin === undefined ? '' : ` (from ${spaceWords(board, e.value.origin)})`}${cause(e.value.cause)}.`;
    case 'passed':
      return `${name(e.value.seat)} had no legal move and passed (TR-2.5).`;
    case 'roundWon':
      return `${name(e.value.winner)} won round ${e.value.round} with ${
        e.value.kind === TribesWinKind.REVEALED_LINE ? 'a revealed line' : 'a line'
      } (${e.value.lines.map((l) => lineWords(l, board)).join('; ')}) (TR-3.3)${
        e.value.feathers ? ' and took the Feathers of Greatness (TR-3.5)' : e.value.badge ? `, taking the badge of ${enumWords(TribesBadge, e.value.badge)} (TR-3.4)` : ''
      }.`;
    case 'roundDrawn':
      return `Round ${e.value.round} was drawn: ${
        e.value.kind === TribesDrawKind.PASSES ? 'every player passed' : 'the move limit was reached'
      } (TR-2.5).`;
    case 'penalised':
      return `The referee penalised ${name(e.value.seat)} for coaching, from round ${e.value.fromRound} (TR-4.1).`;
    default:
      return 'Something happened that this page cannot word.';
  }
}

let boardSize = 0;

function describe(event: MatchEvent, context: ViewContext): string {
  if (event.event.case !== 'tribes') return '';
  const e = event.event.value.event;
  if (e.case === 'started') boardSize = e.value.boardSize;
  const size = event.state?.game.case === 'tribes' ? event.state.game.value.boardSize : boardSize;
  return describeGame(event.event.value, context, size);
}

function command(value: TribesCommand['command']) {
  return { case: 'tribes' as const, value: create(TribesCommandSchema, { command: value }) };
}

/** The place option chosen on this page, waiting for its destination. */
let chosen: { version: bigint; index: number } | undefined;

function optionWords(option: TribesPlaceOption, context: ViewContext): string {
  switch (option.source) {
    case TribesPlaceSource.LIFTED:
      return `the lifted ${totemWords(option.totem, context)}`;
    case TribesPlaceSource.BESIDE:
      return `${totemWords(option.totem, context)} from beside the board`;
    default:
      return `${totemWords(option.totem, context)} from your mat`;
  }
}

function placeCommand(option: TribesPlaceOption, destination: number) {
  const place = { destination, totem: { case: undefined } as TribesPlaceTotem };
  if (option.source === TribesPlaceSource.MAT) place.totem = { case: 'size', value: option.totem?.size ?? 0 };
  if (option.source === TribesPlaceSource.BESIDE) place.totem = { case: 'special', value: option.totem?.kind ?? TribesTotemKind.UNSPECIFIED };
  return command({ case: 'place', value: { $typeName: 'totem.v1.TribesPlace', badge: TribesBadge.UNSPECIFIED, ...place } });
}

type TribesPlaceTotem =
  | { case: 'size'; value: number }
  | { case: 'special'; value: TribesTotemKind }
  | { case: undefined; value?: undefined };

function controls(state: MatchState, context: PlayContext): Node | null {
  const table = stateOf(state);
  const legal = table?.legal;
  if (!table || !legal) return null;
  const version = state.summary?.version ?? 0n;
  if (chosen && chosen.version !== version) chosen = undefined;
  const items: Node[] = [];
  const size = table.boardSize;
  if (legal.start) {
    items.push(button('Start the match now (TR-1.1)', () => context.act(command({ case: 'start', value: { $typeName: 'totem.v1.TribesStart' } })), { 'data-testid': 'action-start' }));
  }
  if (legal.mustMove !== TribesTotemKind.UNSPECIFIED) {
    items.push(h('p', {}, `The die demands that you move ${totemWords({ kind: legal.mustMove, seat: 0, size: 0, $typeName: 'totem.v1.TribesTotem' }, context)} (TR-5.2).`));
  }
  const option = chosen ? legal.places[chosen.index] : undefined;
  if (option) {
    items.push(h('p', {}, `Place ${optionWords(option, context)}${legal.forcedCover ? ' (it must cover a revealed line, TR-3.2)' : ''} on:`));
    items.push(
      h(
        'div',
        { class: 'choices' },
        option.destinations.map((destination) =>
          button(spaceWords(size, destination), () => context.act(placeCommand(option, destination)), { 'data-testid': 'action-place' }),
        ),
      ),
    );
    items.push(button('Choose another move', () => { chosen = undefined; context.redraw(); }, { 'data-testid': 'cancel' }));
    return h('div', { class: 'tribes-controls' }, items);
  }
  if (legal.lifts.length) {
    items.push(h('p', {}, 'Lift the top of a space (TR-2.2a):'));
    items.push(
      h(
        'div',
        { class: 'choices' },
        legal.lifts.map((space) =>
          button(`Lift from ${spaceWords(size, space)}`, () => context.act(command({ case: 'lift', value: { $typeName: 'totem.v1.TribesLift', space } })), { 'data-testid': 'action-lift' }),
        ),
      ),
    );
  }
  if (legal.places.length) {
    items.push(h('p', {}, 'Or place a totem (TR-2.2):'));
    items.push(
      h(
        'div',
        { class: 'choices' },
        legal.places.map((place, index) =>
          button(`Place ${optionWords(place, context)}…`, () => { chosen = { version, index }; context.redraw(); }, { 'data-testid': 'action-choose' }),
        ),
      ),
    );
  }
  return items.length ? h('div', { class: 'tribes-controls' }, items) : null;
}

export const tribes: GameModule = {
  game: Game.TRIBES,
  key: 'tribes',
  label: 'Tribes',
  draw,
  headline,
  describe,
  controls,
};

