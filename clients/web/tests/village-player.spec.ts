// A person-like script plays a whole Village match from the page, choosing among the
// controls the page offers for each decision its families owe, against a bot.
import { expect, test } from '@playwright/test';

import { Bots, logVersions, oneTo, pagePlacements, placements, Server } from './support';

const OFFERED = '[data-testid="controls"] button[data-testid^="action-"]:enabled';

test('a player plays a whole Village match from the page against a bot', async ({ page }) => {
  const server = await Server.start();
  let bots: Bots | undefined;
  try {
    const { matchId } = await server.createMatch({ game: 'GAME_VILLAGE', village: { maxPlayers: 2 } });
    await page.goto(`${server.url}/match/${matchId}`);
    await page.getByTestId('join-name').fill('Ana');
    await page.getByTestId('join-button').click();
    await expect(page.getByTestId('viewer')).toContainText('You play seat 0 (Ana)');
    const bot = await server.join(matchId, 'Bot');
    bots = new Bots(server, ['village', '--join', matchId, '--token', bot.token, '--think-ms', '1', '5']);

    const offered = page.locator(OFFERED);
    const ended = page.locator('[data-testid="result"]:not([hidden])');
    let clicks = 0;
    for (;;) {
      await expect(page.locator(`${OFFERED}, [data-testid="result"]:not([hidden])`).first()).toBeVisible({ timeout: 120_000 });
      if (await ended.isVisible()) break;
      const choices = await offered.count();
      if (choices === 0) continue;
      // Tick some spells before casting, as a person would.
      const spells = page.getByTestId('spell-choice');
      for (let i = 0; i < (await spells.count()); i += 1) {
        if (Math.random() < 0.3) await spells.nth(i).check({ timeout: 5_000 }).catch(() => undefined);
      }
      await offered.nth(Math.floor(Math.random() * choices)).click({ timeout: 5_000 }).then(() => { clicks += 1; }, () => undefined);
    }
    expect(clicks).toBeGreaterThan(0);

    await bots.finished();
    const match = await server.getMatch(matchId);
    expect(match.summary.status).toBe('MATCH_STATUS_ENDED');
    expect(await pagePlacements(page)).toEqual(placements(match.summary.result));
    expect(await logVersions(page)).toEqual(oneTo(Number(match.summary.version)));
    // Ana's families decided for themselves at least once (not by the deadline's default).
    const byHer = page.getByTestId('event').filter({ hasText: /Ana's family \d+ (arranged|chose|placed|revealed|passed)/ }).filter({ hasNotText: 'the deadline applied' });
    await expect(byHer.first()).toBeVisible();
    // A refusal (too many spells ticked, say) is shown with its rule id and sentence.
    const refusal = (await page.getByTestId('refusal').textContent()) ?? '';
    if (refusal) expect(refusal).toMatch(/^Refused: VI-[0-9.]+: \S/);
  } finally {
    bots?.stop();
    await server.dispose();
  }
});
