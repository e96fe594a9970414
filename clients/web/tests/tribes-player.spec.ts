// A person-like script plays a whole Tribes match from the page, clicking only the actions
// the page offers, against a bot in the other seat.
import { expect, test } from '@playwright/test';

import { type Bots, logVersions, oneTo, pagePlacements, placements, playAgainstBot, Server } from './support';

test('a player plays a whole Tribes match from the page against a bot', async ({ page }) => {
  const server = await Server.start();
  let bots: Bots | undefined;
  try {
    const { matchId } = await server.createMatch({ game: 'GAME_TRIBES', tribes: { maxPlayers: 2, roundMoveLimit: 40 } });

    // The person joins from the page, by name: seat 0, and plays against a bot.
    const played = await playAgainstBot(page, server, matchId, 'tribes', [10, 30]);
    bots = played.bots;
    expect(played.clicks).toBeGreaterThan(0);
    expect(await page.evaluate(() => Object.keys(sessionStorage).some((k) => k.startsWith('totem-token:')))).toBe(true);

    await bots.finished();
    const match = await server.getMatch(matchId);
    expect(match.summary.status).toBe('MATCH_STATUS_ENDED');
    expect(await pagePlacements(page)).toEqual(placements(match.summary.result));
    expect(await logVersions(page)).toEqual(oneTo(Number(match.summary.version)));
    // Ana placed totems herself: her moves are in the log, made by a player, not the timer.
    await expect(page.getByTestId('event').filter({ hasText: /^\d+ Ana placed/ }).first()).toBeVisible();
    await expect(page.getByTestId('refusal')).toBeEmpty();
  } finally {
    bots?.stop();
    await server.dispose();
  }
});
