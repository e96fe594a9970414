// Village: the families, their cottages, pens and totem poles, the spells on the board,
// the decision awaited, and controls for the decisions the viewer's families owe.
import { create } from '@bufbuild/protobuf';

import { button, h } from '../dom';
import { Game } from '../gen/totem/v1/common_pb';
import type { MatchEvent, MatchState } from '../gen/totem/v1/match_service_pb';
import {
  type VillageCommand,
  VillageCommandSchema,
  type VillageCounts,
  VillageDecisionKind,
  type VillageEvent,
  VillageKind,
  type VillageOwedDecision,
  type VillagePerson,
  VillageSpell,
  type VillageState,
} from '../gen/totem/v1/village_pb';
import { count, enumWords, list } from '../words';
import type { GameModule, PlayContext, ViewContext } from './types';

function stateOf(state: MatchState): VillageState | undefined {
  return state.game.case === 'village' ? state.game.value : undefined;
}

const KINDS: [keyof Omit<VillageCounts, '$typeName' | '$unknown'>, string, string][] = [
  ['girl', 'girl', 'girls'],
  ['boy', 'boy', 'boys'],
  ['youngWoman', 'young woman', 'young women'],
  ['youngMan', 'young man', 'young men'],
  ['matureWoman', 'mature woman', 'mature women'],
  ['matureMan', 'mature man', 'mature men'],
  ['elder', 'elder', 'elders'],
];

function countsWords(counts: VillageCounts | undefined): string {
  if (!counts) return 'nobody';
  const parts = KINDS.filter(([field]) => counts[field] > 0).map(([field, one, many]) => count(counts[field], one, many));
  return parts.length ? parts.join(', ') : 'nobody';
}

function spellWords(spell: VillageSpell): string {
  return spell === VillageSpell.UNSPECIFIED ? 'a face-down spell' : enumWords(VillageSpell, spell);
}

function personWords(person: VillagePerson): string {
  return `a ${enumWords(VillageKind, person.kind)} of cottage ${person.cottage + 1}`;
}

function decisionWords(kind: VillageDecisionKind): string {
  switch (kind) {
    case VillageDecisionKind.ARRANGE:
      return 'arrange the cottages';
    case VillageDecisionKind.CHOOSE:
      return 'choose spells';
    case VillageDecisionKind.PLACE:
      return 'place a spell';
    case VillageDecisionKind.SUBMIT:
      return 'submit placements';
    case VillageDecisionKind.REVEAL:
      return 'reveal spells';
    case VillageDecisionKind.VICTIMS:
      return 'choose victims';
    case VillageDecisionKind.NAME_VICTIMS:
      return 'name victims';
    case VillageDecisionKind.YOUTH:
      return 'choose whom youth spares';
    default:
      return 'decide';
  }
}

function familyName(state: VillageState | undefined, family: number, _context?: ViewContext): string {
  const owner = state?.families[family];
  return owner ? `${owner.name}'s family ${family + 1}` : `family ${family + 1}`;
}

function draw(state: MatchState, context: ViewContext): Node {
  const village = stateOf(state);
  if (!village) return h('p', {}, 'No village in this state.');
  const families = village.families.map((family) =>
    h(
      'section',
      { class: `village-family seat-${family.seat}`, 'data-testid': `village-family-${family.family}` },
      h('h3', {}, `Family ${family.family + 1} (${family.name})`),
      h('p', { 'data-testid': 'pole' }, `Totem pole: ${family.pole} of 6 pieces`),
      h('p', {}, `Pen: ${count(family.birds, 'bird')}; ${count(family.members, 'member')}`),
      h(
        'ol',
        { class: 'cottages' },
        family.cottages.map((cottage, index) => h('li', {}, `Cottage ${index + 1}: ${countsWords(cottage)}`)),
      ),
      family.unhoused && KINDS.some(([f]) => family.unhoused![f] > 0) ? h('p', {}, `Not housed yet: ${countsWords(family.unhoused)}`) : null,
      family.chosen ? h('p', {}, `Chose ${count(family.spellCount, 'spell')} (${count(family.sacrificed, 'bird')} sacrificed); ${family.unplacedCount} unplaced`) : null,
      family.owned && family.hand.length ? h('p', {}, `In hand: ${family.hand.map(spellWords).join(', ')}`) : null,
      family.wipedOut ? h('p', { class: 'warn' }, 'Wiped out this round (VI-3.1)') : null,
      family.elderless ? h('p', { class: 'warn' }, 'Without an elder (VI-3.2)') : null,
    ),
  );
  const board = village.board.map((spot) =>
    h(
      'li',
      {},
      `${spot.revealed || spot.spell ? spellWords(spot.spell) : 'a face-down spell'} of family ${spot.owner + 1} on family ${spot.family + 1}'s cottage ${spot.cottage + 1}${spot.revealed ? ' (revealed)' : ''}`,
    ),
  );
  const decision = village.decision;
  return h(
    'div',
    { class: 'village-table' },
    h(
      'ul',
      { class: 'facts' },
      village.round ? h('li', {}, `Round ${village.round}, phase ${village.phase}: ${village.phaseName}`) : null,
      village.round ? h('li', {}, `Start family: ${familyName(village, village.startFamily, context)}`) : null,
      decision && decision.kind !== VillageDecisionKind.UNSPECIFIED
        ? h('li', { 'data-testid': 'decision' }, `Waiting for ${list(decision.parties.map((f) => familyName(village, f, context)))} to ${decisionWords(decision.kind)} (${decision.rule})`)
        : null,
    ),
    h('div', { class: 'village-families' }, families),
    board.length ? h('section', {}, h('h3', {}, 'Spells on the board'), h('ul', {}, board)) : null,
  );
}

function headline(state: MatchState, context: ViewContext): string {
  const village = stateOf(state);
  const decision = village?.decision;
  if (!village || !decision || decision.kind === VillageDecisionKind.UNSPECIFIED) return '';
  return `${list(decision.parties.map((f) => familyName(village, f, context)))} to ${decisionWords(decision.kind)}`;
}

function describeGame(event: VillageEvent, context: ViewContext, village: VillageState | undefined): string {
  const family = (f: number) => familyName(village, f, context);
  const by = (byDefault: boolean) => (byDefault ? ' (the deadline applied the default)' : '');
  const e = event.event;
  switch (e.case) {
    case 'created':
      return 'A Village match was created.';
    case 'founded':
      return `${count(e.value.families, 'family', 'families')} were founded, each with ${countsWords(e.value.members)} and ${count(e.value.birds, 'bird')} (VI-1.3).`;
    case 'roundBegan':
      return `Round ${e.value.round} began; ${family(e.value.startFamily)} starts (VI-2)${e.value.restarts.length ? `; ${list(e.value.restarts.map(family))} restart` : ''}.`;
    case 'phaseBegan':
      return `Phase ${e.value.phase} of round ${e.value.round} began.`;
    case 'decisionAwaited': {
      const d = e.value.decision;
      return d ? `Waiting for ${list(d.parties.map(family))} to ${decisionWords(d.kind)} (${d.rule}).` : 'A decision is awaited.';
    }
    case 'wipedOut':
      return `${family(e.value.family)} was wiped out, losing ${countsWords(e.value.lost)} (VI-3.1).`;
    case 'dismantled':
      return `${family(e.value.family)} has no elder: its pole is down to ${e.value.pole} (VI-3.2).`;
    case 'arranged':
      return `${family(e.value.family)} arranged its cottages${by(e.value.byDefault)} (VI-2.1).`;
    case 'spellsChosen':
      return `${family(e.value.family)} chose ${count(e.value.count, 'spell')} in secret, sacrificing ${count(e.value.birds, 'bird')}${by(e.value.byDefault)} (VI-2.2).`;
    case 'spellPlaced':
      return `${family(e.value.family)} placed ${e.value.spell ? spellWords(e.value.spell) : 'a spell'} face down on ${family(e.value.targetFamily)}'s cottage ${e.value.cottage + 1}${by(e.value.byDefault)} (VI-2.2).`;
    case 'spellsPassed':
      return `${family(e.value.family)} passed, losing ${count(e.value.lost, 'unplaced spell')} (VI-2.2).`;
    case 'placementsSubmitted':
      return `${family(e.value.family)} submitted ${count(e.value.count, 'placement')} in secret${by(e.value.byDefault)} (VI-2.2).`;
    case 'placementsRevealed':
      return `${count(e.value.placements.length, 'spell')} went on the board face down (VI-2.2).`;
    case 'spellsRevealed':
      return e.value.reveals.length
        ? `${family(e.value.family)} revealed ${list(e.value.reveals.map((r) => spellWords(r.spell)))}${by(e.value.byDefault)} (VI-2.3).`
        : `${family(e.value.family)} revealed nothing${by(e.value.byDefault)} (VI-2.3).`;
    case 'born': {
      const births = e.value.children.filter((c) => c.girls + c.boys > 0);
      return births.length
        ? `Births (VI-2.4): ${list(births.map((c) => `${family(c.family)} cottage ${c.cottage + 1}: ${count(c.girls, 'girl')}, ${count(c.boys, 'boy')}`))}.`
        : 'No child was born (VI-2.4).';
    }
    case 'catchShared':
      return `The hunt caught ${count(e.value.catch, 'bird')} (VI-2.5): ${list(e.value.claims.map((c) => `${family(c.family)} got ${c.got}`))}.`;
    case 'feasted':
      return `The feast (VI-2.6): ${list(e.value.meals.map((m) => `${family(m.family)} ate ${m.eaten}${m.deaths ? `, ${m.deaths} starved` : ''}`))}.`;
    case 'victimsChosen':
      return `${family(e.value.family)} chose the victims of ${family(e.value.starving)}: ${list(e.value.victims.map(personWords))}${by(e.value.byDefault)} (VI-2.6).`;
    case 'victimsNamed':
      return `${family(e.value.family)} named ${count(e.value.count, 'victim')} of ${family(e.value.starving)} in secret (VI-2.6).`;
    case 'victimsRevealed':
      return `The names were revealed: ${list(e.value.deaths.map(personWords))} of ${family(e.value.starving)} died (VI-2.6).`;
    case 'illnessStruck':
      return e.value.deaths.length
        ? `Illness struck (VI-2.7): ${list(e.value.deaths.map((d) => `${family(d.family)} cottage ${d.cottage + 1} lost ${countsWords(d.killed)}`))}.`
        : 'Illness struck nobody (VI-2.7).';
    case 'youthChosen':
      return `${family(e.value.family)} chose whom youth spares: ${list(e.value.spared.map(personWords))}${by(e.value.byDefault)} (VI-2.8).`;
    case 'aged':
      return `A generation passed: everyone aged and the elders died (VI-2.8)${e.value.spared.length ? `, ${count(e.value.spared.length, 'person', 'people')} spared` : ''}.`;
    case 'censusTaken':
      return `The census (VI-2.9): ${list(e.value.sizes.map((n, f) => `${family(f)} ${n}`))}${e.value.pieces.length ? `; ${list(e.value.pieces.map(family))} added a totem piece` : '; no piece added'}.`;
    case 'roundEnded':
      return `Round ${e.value.round} ended; every chit was published (VI-2.2).`;
    case 'totemCompleted':
      return e.value.winner !== undefined
        ? `${family(e.value.winner)} completed its totem pole and won (VI-4).`
        : `Totem poles were completed; ${list(e.value.tied.map(family))} stay tied (VI-7.11).`;
    default:
      return 'Something happened that this page cannot word.';
  }
}

function describe(event: MatchEvent, context: ViewContext): string {
  if (event.event.case !== 'village') return '';
  return describeGame(event.event.value, context, event.state ? stateOf(event.state) : undefined);
}

function send(context: PlayContext, command: VillageCommand['command']): void {
  context.act({ case: 'village', value: create(VillageCommandSchema, { command }) });
}

function decisionControls(decision: VillageOwedDecision, village: VillageState, context: PlayContext): Node {
  const who = familyName(village, decision.family, context);
  const parts: Node[] = [h('legend', {}, `${who}: ${decisionWords(decision.kind)} (${decision.rule})`)];
  const choices = decision.choices;
  if (choices.case === 'choose') {
    const boxes = choices.value.spells.map((spell) =>
      h('label', {}, h('input', { type: 'checkbox', value: String(spell), 'data-testid': 'spell-choice' }), ` ${spellWords(spell)}`),
    );
    const birds = h('input', { type: 'number', min: '0', max: String(choices.value.birds), value: '0', 'aria-label': 'birds to sacrifice' });
    parts.push(
      h('p', {}, `At most ${count(choices.value.maxSpells, 'spell')}: ${choices.value.pieces} free, one more per bird sacrificed.`),
      h('div', { class: 'choices' }, boxes),
      h('label', {}, 'Birds to sacrifice: ', birds),
      button('Cast these spells', () => {
        const spells = boxes.map((label) => label.querySelector('input')!).filter((i) => i.checked).map((i) => Number(i.value) as VillageSpell);
        send(context, { case: 'chooseSpells', value: { $typeName: 'totem.v1.VillageChooseSpells', family: decision.family, spells, birds: Number(birds.value) } });
      }, { 'data-testid': 'action-choose-spells' }),
    );
  } else if (choices.case === 'place' && decision.kind === VillageDecisionKind.PLACE) {
    const spell = h('select', { 'aria-label': 'spell' }, choices.value.hand.map((s) => h('option', { value: String(s) }, spellWords(s))));
    const target = h(
      'select',
      { 'aria-label': 'cottage' },
      choices.value.targets.map((t, i) => h('option', { value: String(i) }, `${familyName(village, t.family, context)}, cottage ${t.cottage + 1}`)),
    );
    parts.push(
      h('label', {}, 'Spell: ', spell),
      h('label', {}, ' on ', target),
      button('Place it face down', () => {
        const chosenTarget = choices.value.targets[Number(target.value)];
        if (!chosenTarget) return;
        send(context, {
          case: 'placeSpell',
          value: { $typeName: 'totem.v1.VillagePlaceSpell', family: decision.family, spell: Number(spell.value) as VillageSpell, targetFamily: chosenTarget.family, cottage: chosenTarget.cottage },
        });
      }, { 'data-testid': 'action-place-spell' }),
    );
    if (choices.value.canPass) {
      parts.push(button('Pass (lose the unplaced spells)', () => send(context, { case: 'passSpells', value: { $typeName: 'totem.v1.VillagePassSpells', family: decision.family } }), { 'data-testid': 'action-pass' }));
    }
  } else if (choices.case === 'reveal') {
    const positions = choices.value.revealable;
    parts.push(
      button(`Reveal all ${count(positions.length, 'spell')}`, () => send(context, { case: 'revealSpells', value: { $typeName: 'totem.v1.VillageRevealSpells', family: decision.family, positions } }), { 'data-testid': 'action-reveal-all' }),
      button('Reveal none', () => send(context, { case: 'revealSpells', value: { $typeName: 'totem.v1.VillageRevealSpells', family: decision.family, positions: [] } }), { 'data-testid': 'action-reveal-none' }),
    );
  }
  if (decision.default) {
    const fallback = decision.default;
    parts.push(button('Do what the deadline would do (the default)', () => context.act({ case: 'village', value: fallback }), { 'data-testid': 'action-default' }));
  }
  return h('fieldset', { class: 'village-decision', 'data-testid': 'village-decision' }, parts);
}

function controls(state: MatchState, context: PlayContext): Node | null {
  const village = stateOf(state);
  const legal = village?.legal;
  if (!village || !legal) return null;
  const items: Node[] = [];
  if (legal.start) {
    items.push(button('Start the match now (VI-1.1)', () => send(context, { case: 'start', value: { $typeName: 'totem.v1.VillageStart' } }), { 'data-testid': 'action-start' }));
  }
  for (const decision of legal.decisions) items.push(decisionControls(decision, village, context));
  return items.length ? h('div', { class: 'village-controls' }, items) : null;
}

export const village: GameModule = {
  game: Game.VILLAGE,
  key: 'village',
  label: 'Village',
  draw,
  headline,
  describe,
  controls,
};
