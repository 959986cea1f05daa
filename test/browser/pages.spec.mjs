// Browser test of a multi-page public form with display rules and a hidden field, run by
// test/browser_test.go (TestBrowserFormPages):
//
//   node test/browser/pages.spec.mjs <page url> <artifact dir>
//
// The form: page 1 asks the role (required) and, for employees only, a reason (a rule on the
// same page); page 2 asks the company (employees only: a student skips the page); page 3 the
// school (required). A hidden "campaign" field is filled from the page URL (?campaign=…).
// The script runs the same path twice, with JavaScript on and off (javaScriptEnabled: false):
//   1. the first page says "Step 1 of 2" (the company page is skipped until the role says
//      otherwise); with JavaScript the reason appears and disappears at once with the role;
//   2. Next without a role shows an error on page 1;
//   3. Student, Next: "Step 2 of 2" with the school, no company; Back keeps the answer; Next;
//   4. the school, Submit: the thank-you page.
// axe-core on every state: zero violations. The Go test then checks the two submissions.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import fs from 'node:fs';
import path from 'node:path';
import { axeAsServed, commandLine, expectNoAxeViolations, fail, launch, ok, run } from './kit.mjs';

const [pageURL, artifactDir] = commandLine('pages.spec.mjs', 'page url', 'artifact dir');
const minFillSeconds = Number(process.env.FORMWARD_MIN_FILL_SECONDS || '1');

// Without JavaScript nothing can be evaluated in the page, axe-core included: the page as the
// server sent it is then checked in a JavaScript-enabled page at the same URL (its own script
// left out, so the DOM stays as the server drew it; its styles load as usual).
let axeContext;
const axeOn = (page, resp, js, what) => axeAsServed(axeContext, page, resp, js, what);

async function expectStep(page, text, what) {
  const progress = page.locator('#fw-progress');
  const got = (await progress.innerText()).trim();
  if (got !== text) fail(`${what}: progress says "${got}", want "${text}"`);
}

async function walk(browser, js) {
  const mode = js ? 'JavaScript on' : 'JavaScript off';
  const context = await browser.newContext({ javaScriptEnabled: js, viewport: { width: 800, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    const campaign = js ? 'spring-js' : 'spring-nojs';
    const resp = await page.goto(`${pageURL}?campaign=${campaign}`, { waitUntil: 'load' });
    if (!resp || resp.status() !== 200) fail(`${mode}: GET status ${resp?.status()}`);
    const started = Date.now();
    await expectStep(page, 'Step 1 of 2', `${mode}, first page`);
    if ((await page.getByLabel(/^Campaign/).count()) !== 0) fail(`${mode}: the hidden field is visible`);
    const reason = page.getByLabel(/^Reason/);
    if (js) {
      if (await reason.isVisible()) fail('the reason (employees only) is shown before any role');
      await page.getByRole('radio', { name: 'Employee' }).check();
      await reason.waitFor({ state: 'visible' });
      await page.getByRole('radio', { name: 'Student' }).check();
      await reason.waitFor({ state: 'hidden' });
      await page.getByRole('radio', { name: 'Student' }).evaluate((el) => { el.checked = false; });
      ok(`${mode}: the reason follows the role at once`);
    } else if (!(await reason.isVisible())) {
      fail('without JavaScript the same-page conditional field must be drawn');
    } else {
      ok(`${mode}: the same-page conditional field is drawn (the server decides on the post)`);
    }
    await axeOn(page, resp, js, `${mode}, page 1`);
    await page.screenshot({ path: path.resolve(artifactDir, `pages-${js ? 'js' : 'nojs'}-1.png`), fullPage: true });

    // Next without the required role: the page's script stops it, or the server answers.
    let errResp;
    if (js) await page.getByRole('button', { name: 'Next' }).click();
    else [errResp] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Next' }).click()]);
    await page.locator('.field-error').first().waitFor({ state: 'visible' });
    await expectStep(page, 'Step 1 of 2', `${mode}, page 1 with its error`);
    ok(`${mode}: Next without a role stays on page 1 with an error`);
    await axeOn(page, errResp, js, `${mode}, page 1 with an error`);

    // A student skips the company page.
    await page.getByRole('radio', { name: 'Student' }).check();
    if (!js) await reason.fill('typed, then skipped');
    const [lastResp] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Next' }).click()]);
    await expectStep(page, 'Step 2 of 2', `${mode}, after Next`);
    if ((await page.getByLabel(/^Company/).count()) !== 0) fail(`${mode}: the company page was not skipped`);
    if (!(await page.getByLabel(/^School/).isVisible())) fail(`${mode}: no school on the last page`);
    ok(`${mode}: the company page is skipped`);
    await axeOn(page, lastResp, js, `${mode}, last page`);

    // Back keeps the answer.
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Back' }).click()]);
    await expectStep(page, 'Step 1 of 2', `${mode}, after Back`);
    if (!(await page.getByRole('radio', { name: 'Student' }).isChecked())) fail(`${mode}: Back lost the role`);
    ok(`${mode}: Back keeps the answers`);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Next' }).click()]);
    await expectStep(page, 'Step 2 of 2', `${mode}, Next again`);

    await page.getByLabel(/^School/).fill('MIT');
    const wait = minFillSeconds * 1000 + 300 - (Date.now() - started);
    if (wait > 0) await page.waitForTimeout(wait);
    const [thanks] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Submit' }).click()]);
    const heading = (await page.locator('h1').first().innerText()).trim();
    if (!/thank you/i.test(heading)) fail(`${mode}: no thank-you page after Submit, the page says: ${heading} ${(await page.locator('body').innerText()).slice(0, 400)}`);
    ok(`${mode}: submitted`);
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
    await walk(browser, true);
    await walk(browser, false);
  } finally {
    await browser.close();
  }
}

run(main);
