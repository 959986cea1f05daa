// Browser test of recall and scores on a three-page quiz, run by test/recall_scores_browser_test.go
// (TestBrowserRecallScores):
//
//   node test/browser/recall_scores.spec.mjs <page url> <artifact dir>
//
// The quiz: page 1 asks the name and the capital of France (scored), and, further down the same
// page, "Anything to add, {{name}}?"; page 2 asks "How old are you, {{name}}?"; page 3 the
// primes (a scored checkbox). The thank-you message is "Well done {{name}}: {{score}} points.".
// The script runs the same path with JavaScript on and off, each at 390 px and at desktop width:
//   1. with JavaScript, the recall on page 1 follows the name as it is typed;
//   2. after Next, page 2's label recalls the name, as text (the name holds "<b>x</b>");
//   3. the thank-you page recalls the name and shows the score (1 + 0.5 + 0.25 = 1.75).
// axe-core on every state: zero violations. It prints "ok: ..." lines and exits 0, or prints
// "FAIL: ..." and exits 1.
import fs from 'node:fs';
import path from 'node:path';
import { axeAsServed, commandLine, expectNoAxeViolations, fail, launch, ok, run } from './kit.mjs';

const [pageURL, artifactDir] = commandLine('recall_scores.spec.mjs', 'page url', 'artifact dir');
const minFillSeconds = Number(process.env.FORMWARD_MIN_FILL_SECONDS || '1');
const name = 'Ada <b>x</b>';

// Without JavaScript axe-core runs on the page as the server sent it, in a JavaScript-enabled
// copy without the page's own script (as pages.spec.mjs does).
let axeContext;
const axeOn = (page, resp, js, what) => axeAsServed(axeContext, page, resp, js, what);

async function walk(browser, js, width) {
  const mode = `${js ? 'JavaScript on' : 'JavaScript off'}, ${width} px`;
  const context = await browser.newContext({ javaScriptEnabled: js, viewport: { width, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    const resp = await page.goto(pageURL, { waitUntil: 'load' });
    if (!resp || resp.status() !== 200) fail(`${mode}: GET status ${resp?.status()}`);
    const started = Date.now();
    await page.getByLabel(/^Your name/).fill(name);
    const spot = page.locator('#fw-form [data-recall]').first();
    if (js) {
      const live = await spot.textContent();
      if (live !== name) fail(`${mode}: the recall on page 1 says "${live}", want "${name}"`);
      ok(`${mode}: the recall follows the name as it is typed`);
    }
    await page.getByRole('radio', { name: 'Paris' }).check();
    await axeOn(page, resp, js, `${mode}, page 1`);

    const [p2] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Next' }).click()]);
    const label = (await page.locator('label', { hasText: 'How old are you' }).innerText()).trim();
    if (!label.startsWith(`How old are you, ${name}?`)) fail(`${mode}: page 2's label reads "${label}"`);
    if ((await page.locator('#fw-form label b').count()) !== 0) fail(`${mode}: the recalled answer was drawn as markup`);
    ok(`${mode}: page 2 recalls the name, as text`);
    await axeOn(page, p2, js, `${mode}, page 2`);
    await page.screenshot({ path: path.resolve(artifactDir, `recall-${js ? 'js' : 'nojs'}-${width}.png`), fullPage: true });
    await page.getByLabel(/^How old are you/).fill('36');

    const [p3] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Next' }).click()]);
    await page.getByRole('checkbox', { name: '2' }).check();
    await page.getByRole('checkbox', { name: '3' }).check();
    await axeOn(page, p3, js, `${mode}, page 3`);
    const wait = minFillSeconds * 1000 + 300 - (Date.now() - started);
    if (wait > 0) await page.waitForTimeout(wait);
    const [thanks] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Submit' }).click()]);
    const body = await page.locator('body').innerText();
    if (!body.includes(`Well done ${name}: 1.75 points.`)) fail(`${mode}: the thank-you page says: ${body.slice(0, 400)}`);
    ok(`${mode}: the thank-you page recalls the name and shows the score`);
    await axeOn(page, thanks, js, `${mode}, thank-you page`);
    if (errors.length) fail(`${mode}: errors in the page: ${errors.join(' | ')}`);
  } finally {
    await context.close();
  }
}

async function main() {
  fs.mkdirSync(artifactDir, { recursive: true });
  const browser = await launch();
  axeContext = await browser.newContext({ viewport: { width: 800, height: 900 } });
  try {
    for (const js of [true, false]) {
      for (const width of [390, 1280]) await walk(browser, js, width);
    }
  } finally {
    await browser.close();
  }
}

run(main);
