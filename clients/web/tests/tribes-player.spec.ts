// A person-like script plays a whole Tribes match from the page, clicking only the actions
// the page offers, against a bot in the other seat.
import { expect, test } from '@playwright/test';

import { Bots, logVersions, oneTo, pagePlacements, placements, Server } from './support';

/** The buttons of the actions the page offers now. */
const OFFERED = '[data-testid="controls"] button[data-testid^="action-"]:enabled';

test('a player plays a whole Tribes match from the page against a bot', async ({ page }) => {
  const server = await Server.start();
  let bots: Bots | undefined;
  try {
    const { matchId } = await server.createMatch({ game: 'GAME_TRIBES', tribes: { maxPlayers: 2, roundMoveLimit: 40 } });

    // The person joins from the page, by name: seat 0.
    await page.goto(`${server.url}/match/${matchId}`);
    await page.getByTestId('join-name').fill('Ana');
    await page.getByTestId('join-button').click();
    await expect(page.getByTestId('viewer')).toContainText('You play seat 0 (Ana)');
    expect(await page.evaluate(() => Object.keys(sessionStorage).some((k) => k.startsWith('totem-token:')))).toBe(true);

    // The bot takes the other seat, which starts the match.
    const bot = await server.join(matchId, 'Bot');
    bots = new Bots(server, ['tribes', '--join', matchId, '--token', bot.token, '--think-ms', '10', '30']);

    const offered = page.locator(OFFERED);
    const ended = page.getByTestId('result');
    let clicks = 0;
    for (;;) {
      // Wait for the page to offer something, or to show the end.
      await expect(page.locator(`${OFFERED}, [data-testid="result"]:not([hidden])`).first()).toBeVisible({ timeout: 120_000 });
      if (await ended.isVisible()) break;
      const choices = await offered.count();
      if (choices === 0) continue;
      const pick = offered.nth(Math.floor(Math.random() * choices));
      // The state may move on between the count and the click (the turn timer): then the
      // button is gone, and the loop looks again.
      await pick.click({ timeout: 5_000 }).then(() => { clicks += 1; }, () => undefined);
    }
    expect(clicks).toBeGreaterThan(0);

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
