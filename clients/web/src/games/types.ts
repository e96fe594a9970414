// What the generic pages need from one game: draw its state, word its events, offer its
// legal actions. One module per game implements it (see index.ts).
import type { Game } from '../gen/totem/v1/common_pb';
import type { ActRequest, MatchEvent, MatchState } from '../gen/totem/v1/match_service_pb';

/** What a game module knows of the match around it. */
export interface ViewContext {
  /** A seat's player name ("seat 3" while the seat is free). */
  name(seat: number): string;
}

/** The command field of an ActRequest (a game's command, or a referee's stop). */
export type Command = ActRequest['command'];

/** What a game module may do for the player of this page. */
export interface PlayContext extends ViewContext {
  /** The seat this page plays. */
  seat: number;
  /** Send one command (Act): it is stamped with the last version drawn. */
  act(command: Command): void;
  /** Draw the controls again (after a choice that sends nothing yet). */
  redraw(): void;
}

export interface GameModule {
  /** The game, as in MatchSummary.game. */
  game: Game;
  /** The case of its state in MatchState.game, of its events in MatchEvent.event and of its commands. */
  key: 'jungleSpeed' | 'tribes' | 'village';
  /** Its name for people. */
  label: string;
  /** The table, drawn from one state. */
  draw(state: MatchState, context: ViewContext): Node;
  /** Whose move it is, in a few words; empty when nobody's. */
  headline(state: MatchState, context: ViewContext): string;
  /** One of its events in words (the game's own events only). */
  describe(event: MatchEvent, context: ViewContext): string;
  /** The controls of the legal actions in a player's state; null when it offers none. */
  controls(state: MatchState, context: PlayContext): Node | null;
  /** A key pressed on a player's page; true if the game used it. */
  keyPressed?(event: KeyboardEvent, state: MatchState, context: PlayContext): boolean;
}
