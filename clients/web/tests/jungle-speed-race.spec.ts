// Jungle Speed races from the page: its player grabs with the space bar whenever a duel
// is open, against a bot; every race's outcome shown is the one the server recorded, and
// the page's grabs carry its seen version and reaction time.
import { expect, test } from '@playwright/test';

import { Bots, logVersions, oneTo, Server, serverEvents } from './support';

/** 72 symbol cards in id order: seat 0 gets ids 0, 2, 4..., seat 1 ids 1, 3, 5...; ids 2k and 2k+1 share a shape, so every pair of reveals opens a duel. */
const DEAL = Array.from({ length: 72 }, (_, id) => id);
const GRABS = 4;

test('a player grabs the totem with the keyboard in Jungle Speed races against a bot', async ({ page }) => {
  const server = await Server.start();
  let bots: Bots | undefined;
  try {
    const { matchId } = await server.createMatch({
      game: 'GAME_JUNGLE_SPEED',
      jungleSpeed: { maxPlayers: 2, turnTimeoutMs: 0, specials: {}, prearrangedDeal: DEAL },
    });
    const ana = await server.join(matchId, 'Ana');

    // The player opens a link carrying her token in its fragment.
    await page.goto(`${server.url}/match/${matchId}#token=${ana.token}`);
    await expect(page.getByTestId('viewer')).toContainText('You play seat 0 (Ana)');
    await expect(page).toHaveURL(`${server.url}/match/${matchId}`);

    const bot = await server.join(matchId, 'Bot');
    bots = new Bots(server, ['jungle-speed', '--join', matchId, '--token', bot.token, '--reaction-ms', '50', '150', '--reveal-delay-ms', '20', '40']);

    const grab = page.locator('[data-testid="controls"] [data-testid="action-grab"]:enabled');
    const reveal = page.locator('[data-testid="controls"] [data-testid="action-reveal"]:enabled');
    const ended = page.locator('[data-testid="result"]:not([hidden])');
    let grabs = 0;
    while (grabs < GRABS) {
      await expect(page.locator(`[data-testid="controls"] :is([data-testid="action-grab"], [data-testid="action-reveal"]):enabled, [data-testid="result"]:not([hidden])`).first()).toBeVisible({ timeout: 120_000 });
      if (await ended.isVisible()) break;
      if (await grab.count()) {
        await page.keyboard.press(' ');
        grabs += 1;
      } else {
        await reveal.first().click({ timeout: 5_000 }).catch(() => undefined);
      }
    }
    expect(grabs).toBe(GRABS);

    // Wait until the page shows a grab of Ana's decided after her last press.
    const outcomes = '[data-kind="jungleSpeed.duelWon"], [data-kind="jungleSpeed.lateGrab"], [data-kind="jungleSpeed.wrongGrab"]';
    const anaGrabs = (events: Record<string, any>[]) =>
      events.filter((e) => {
        const js = e.jungleSpeed ?? {};
        return (js.duelWon && (js.duelWon.winner ?? 0) === 0) || (js.lateGrab && (js.lateGrab.seat ?? 0) === 0) ||
          (js.wrongGrab && (js.wrongGrab.seat ?? 0) === 0) ||
          (js.duelWon?.tie?.contenders ?? []).some((c: Record<string, any>) => (c.seat ?? 0) === 0);
      });
    let events: Record<string, any>[] = [];
    await expect.poll(async () => {
      const versions = await logVersions(page);
      events = await serverEvents(server, matchId, versions[versions.length - 1]!, ana.token);
      return anaGrabs(events).length;
    }, { timeout: 120_000 }).toBeGreaterThanOrEqual(GRABS);
    expect(await page.locator(outcomes).count()).toBeGreaterThan(0);

    // The page's log is the server's history, and each race reads as the server decided it.
    const shown = events.length;
    expect((await logVersions(page)).slice(0, shown)).toEqual(oneTo(shown));
    const names = ['Ana', 'Bot'];
    for (const event of events) {
      const js = event.jungleSpeed ?? {};
      const line = page.locator(`[data-testid="event"][data-version="${event.version}"]`);
      if (js.duelWon) {
        const loser = names[(js.duelWon.losers ?? [0])[0] ?? 0];
        await expect(line).toContainText(`${names[js.duelWon.winner ?? 0]} grabbed the totem and won the duel against ${loser}`);
      } else if (js.lateGrab) {
        await expect(line).toContainText(`${names[js.lateGrab.seat ?? 0]} grabbed too late`);
      } else if (js.wrongGrab) {
        await expect(line).toContainText(`${names[js.wrongGrab.seat ?? 0]} grabbed the totem with no duel open`);
      }
    }

    // Ana's grabs went with the version she had seen and her reaction, measured by the page.
    for (const event of anaGrabs(events)) {
      const js = event.jungleSpeed;
      const stamp =
        js.lateGrab?.stamp ?? js.wrongGrab?.stamp ??
        ((js.duelWon?.winner ?? 0) === 0 ? js.duelWon.stamp : js.duelWon.tie.contenders.find((c: Record<string, any>) => (c.seat ?? 0) === 0).stamp);
      expect(Number(stamp.seenVersion)).toBeGreaterThan(0);
      expect(Number(stamp.seenVersion)).toBeLessThan(Number(event.version));
      expect(stamp.clientReactionMs).toBeDefined();
    }
  } finally {
    bots?.stop();
    await server.dispose();
  }
});
