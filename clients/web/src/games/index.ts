// The registry of games: one module per game, looked up by MatchSummary.game.
import type { Game } from '../gen/totem/v1/common_pb';
import { jungleSpeed } from './jungle_speed';
import { tribes } from './tribes';
import type { GameModule } from './types';
import { village } from './village';

const modules: readonly GameModule[] = [jungleSpeed, tribes, village];

/** The module of a game, or undefined for a game this client does not know. */
export function gameModule(game: Game): GameModule | undefined {
  return modules.find((module) => module.game === game);
}

/** A game's name for people. */
export function gameLabel(game: Game): string {
  return gameModule(game)?.label ?? `game ${game}`;
}
