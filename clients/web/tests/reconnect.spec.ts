// A dropped connection resumes: the server is killed mid-match and started again on the
// same ports and store; the page shows that it is reconnecting, resumes Watch after the
// last version it drew, and its log holds every version exactly once, in order.
import { expect, test } from '@playwright/test';

import { logVersions, oneTo, ORGANISER_TOKEN, Server } from './support';

test('the page resumes the stream after the server is killed and restarted', async ({ page }) => {
  let server = await Server.start();
  try {
    // A match the turn timer plays by itself: it reveals for each seat in turn (JS-3.4).
    const { matchId, refereeToken } = await server.createMatch({
      game: 'GAME_JUNGLE_SPEED',
      jungleSpeed: { maxPlayers: 2, turnTimeoutMs: 150, specials: {} },
    });
    await server.join(matchId, 'Ana');
    await server.join(matchId, 'Bo');

    await page.goto(`${server.url}/match/${matchId}`);
    const events = page.getByTestId('event');
    const status = page.getByTestId('stream-status');
    await expect(events.nth(9)).toBeAttached();
    await expect(status).toHaveAttribute('data-status', 'live');

    // The connection drops: the server dies without a word.
    await server.kill();
    await expect(status).toHaveAttribute('data-status', 'reconnecting');
    await expect(status).toContainText('reconnecting…');
    const before = (await logVersions(page)).length;

    // The same server comes back; the timer goes on and the page catches up by itself.
    server = await server.restart();
    await expect(events.nth(before + 9)).toBeAttached();
    await expect(status).toHaveAttribute('data-status', 'live');

    // The referee stops the match; the page shows its end.
    await server.rpc('Act', { matchId, stop: { statement: 'The reconnection test is over.' } }, refereeToken || ORGANISER_TOKEN);
    await expect(page.getByTestId('result')).toBeVisible();
    await expect(page.getByTestId('end-reason')).toContainText('stopped by the referee');
    const match = await server.getMatch(matchId);
    expect(await logVersions(page)).toEqual(oneTo(Number(match.summary.version)));
  } finally {
    await server.dispose();
  }
});
