// The web client's first paint, in Debian's Chromium driven by Playwright (the web
// client's own copy): for each of PAGES fresh browser contexts (empty cache), the lobby
// page, then the page of the live match MATCH at version VERSION. Usage:
//
//   node bench/paint.mjs URL MATCH VERSION PAGES
//
// Prints one line of JSON: per page, its first contentful paint and, for the match, when
// its GetMatch was answered, when its Watch stream's first event came and when the event
// at VERSION was first in the page (the stream caught up), in ms from the navigation's
// start.
import { createRequire } from 'node:module';

const require = createRequire(new URL('../clients/web/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const [url, match, version, pages] = process.argv.slice(2);
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Record when the first element matching `selector` is in the page (ms since navigation). */
function whenShown(selector) {
  const seen = () => {
    if (window.__shown === undefined && document.querySelector(selector)) {
      window.__shown = performance.now();
    }
  };
  new MutationObserver(seen).observe(document, { childList: true, subtree: true });
}

async function measure(browser, path, selector) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.addInitScript(whenShown, selector);
    await page.goto(url + path);
    await page.waitForSelector(selector, { timeout: 60_000 });
    return await page.evaluate(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
      shown: window.__shown ?? null,
      // The client's own marks: GetMatch answered, the Watch stream's first event.
      read: performance.getEntriesByName('totem:match-read')[0]?.startTime ?? null,
      first: performance.getEntriesByName('totem:first-event')[0]?.startTime ?? null,
    }));
  } finally {
    await context.close();
  }
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
const results = { lobby: [], match: [] };
try {
  for (let i = 0; i < Number(pages); i += 1) {
    results.lobby.push(await measure(browser, '/', `[data-testid="match-row"]`));
    results.match.push(
      await measure(browser, `/match/${match}`, `[data-testid="event"][data-version="${version}"]`),
    );
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(results));
