// A spectator watches a bot match of each game to its end, from the lobby.
import { expect, test } from '@playwright/test';

import { Bots, type GameName, logVersions, matchOf, oneTo, pagePlacements, placements, Server } from './support';

const GAMES: { title: string; game: GameName; args: string[] }[] = [
  { title: 'Jungle Speed', game: 'GAME_JUNGLE_SPEED', args: ['jungle-speed', '--players', '3', '--reveal-delay-ms', '20', '50'] },
  { title: 'Tribes', game: 'GAME_TRIBES', args: ['tribes', '--think-ms', '20', '40'] },
  { title: 'Village', game: 'GAME_VILLAGE', args: ['village', '--think-ms', '5', '15'] },
];

for (const { title, game, args } of GAMES) {
  test(`a spectator watches a bot match of ${title} to its end`, async ({ page }) => {
    const server = await Server.start();
    const bots = new Bots(server, args);
    try {
      const matchId = await matchOf(server, game);

      await page.goto(`${server.url}/`);
      const row = page.locator(`[data-testid="match-row"][data-match-id="${matchId}"]`);
      await row.getByTestId('match-link').click();
      await expect(page).toHaveURL(`${server.url}/match/${matchId}`);
      await expect(page.getByTestId('viewer')).toContainText('spectator');

      // The end, as the page shows it, is the end the server records.
      await expect(page.getByTestId('result')).toBeVisible({ timeout: 240_000 });
      await bots.finished();
      const match = await server.getMatch(matchId);
      expect(match.summary.status).toBe('MATCH_STATUS_ENDED');
      expect(await pagePlacements(page)).toEqual(placements(match.summary.result));
      await expect(page.getByTestId('stream-status')).toHaveAttribute('data-status', 'ended');
      // Every event, in words, each once and in order.
      expect(await logVersions(page)).toEqual(oneTo(Number(match.summary.version)));
      await expect(page.getByTestId('event').last()).toContainText('The match ended');
      await expect(page.getByTestId('event').filter({ hasText: 'cannot word' })).toHaveCount(0);
    } finally {
      bots.stop();
      await server.dispose();
    }
  });
}
