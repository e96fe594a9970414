// Words shared by every page and game: enum names, lists, counts, the end of a match.
import { EndReason, type MatchSummary, MatchStatus, type Placement } from './gen/totem/v1/common_pb';

/** An enum value's name in words: Shape.STAR_POINTED -> "star pointed". */
export function enumWords(names: Record<number, string>, value: number): string {
  return (names[value] ?? String(value)).toLowerCase().replace(/_/g, ' ');
}

/** "Ana", "Ana and Bo", "Ana, Bo and Cy". */
export function list(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** "1 card", "2 cards". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A summary's status in words. */
export function statusWords(status: MatchStatus): string {
  switch (status) {
    case MatchStatus.WAITING:
      return 'waiting for players';
    case MatchStatus.PLAYING:
      return 'in play';
    case MatchStatus.ENDED:
      return 'ended';
    default:
      return 'unknown';
  }
}

/** Why a match ended, in words. */
export function reasonWords(reason: EndReason): string {
  switch (reason) {
    case EndReason.COMPLETED:
      return 'played to the end';
    case EndReason.ABANDONED:
      return 'abandoned (JS-8.3)';
    case EndReason.STOPPED:
      return 'stopped by the referee (JS-8.3)';
    default:
      return 'not ended';
  }
}

/** A seat's name from a summary. */
export function seatName(summary: MatchSummary | undefined, seat: number): string {
  return summary?.players.find((player) => player.seat === seat)?.name ?? `seat ${seat}`;
}

/** Placements by place, then seat. */
export function sortedResult(result: Placement[]): Placement[] {
  return [...result].sort((a, b) => a.place - b.place || a.seat - b.seat);
}

/** "1. Bo; 2. Ana, Cy" */
export function resultWords(result: Placement[], name: (seat: number) => string): string {
  const places = new Map<number, string[]>();
  for (const placement of sortedResult(result)) {
    places.set(placement.place, [...(places.get(placement.place) ?? []), name(placement.seat)]);
  }
  return [...places].map(([place, names]) => `${place}. ${list(names)}`).join('; ');
}
