// A person-like script plays a whole Village match from the page, choosing among the
// controls the page offers for each decision its families owe, against a bot.
import { expect, test } from '@playwright/test';

import { type Bots, logVersions, oneTo, pagePlacements, placements, playAgainstBot, Server } from './support';

test('a player plays a whole Village match from the page against a bot', async ({ page }) => {
  const server = await Server.start();
  let bots: Bots | undefined;
  try {
    const { matchId } = await server.createMatch({ game: 'GAME_VILLAGE', village: { maxPlayers: 2 } });
    // Ana ticks some spells before casting, as a person would.
    const tick = async () => {
      const spells = page.getByTestId('spell-choice');
      for (let i = 0; i < (await spells.count()); i += 1) {
        if (Math.random() < 0.3) await spells.nth(i).check({ timeout: 5_000 }).catch(() => undefined);
      }
    };
    const played = await playAgainstBot(page, server, matchId, 'village', [1, 5], tick);
    bots = played.bots;
    expect(played.clicks).toBeGreaterThan(0);

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
