// Browser test of save and resume (settings.partial), run by test/resume_browser_test.go
// (TestBrowserSaveAndResume):
//
//   node test/browser/resume.spec.mjs <page url> <artifact dir>
//
// The form has three pages: name and email; a colour (radio, required); comments. With
// JavaScript on and off, at 390 px and at desktop width, a respondent
//   1. fills page 1 and goes on (with JavaScript the page saves a few seconds after typing,
//      in the background, and carries the draft's resume token from then on);
//   2. chooses a colour on page 2 and presses "Save and continue later": the resume link;
//   3. leaves: a fresh browser context (no cookies, nothing cached) opens the link, finds
//      page 2 with every answer, goes on to page 3 and submits;
//   4. opens the link once more: it says the link was already used, and shows no answer.
// One more respondent (JavaScript off) saves and never comes back: the Go test reads the
// database for that draft's answers in plain text, then erases it by email. axe-core on every
// state: zero violations. The script prints "ok: ..." lines and exits 0, or "FAIL: ..." and 1.
import fs from 'node:fs';
import path from 'node:path';
import { axeAsServed, commandLine, expectNoAxeViolations, fail, launch, ok, run } from './kit.mjs';

const [pageURL, artifactDir] = commandLine('resume.spec.mjs', 'page url', 'artifact dir');

let axeContext;
// Without JavaScript the page is checked as the server sent it, in a page that runs axe.
const axeOn = (page, resp, js, what) => axeAsServed(axeContext, page, resp, js, what);

async function expectStep(page, text, what) {
  const got = (await page.locator('#fw-progress').innerText()).trim();
  if (got !== text) fail(`${what}: progress says "${got}", want "${text}"`);
}

async function noSideways(page, what) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (overflow > 1) fail(`${what}: the page scrolls sideways by ${overflow} px`);
}

async function click(page, name) {
  const [resp] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name }).click()]);
  return resp;
}

// saveOnce fills page 1 and page 2 and saves; it returns the resume link.
async function saveOnce(browser, js, width, who, then) {
  const mode = `${js ? 'JavaScript on' : 'JavaScript off'}, ${width} px`;
  const context = await browser.newContext({ javaScriptEnabled: js, viewport: { width, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  try {
    let resp = await page.goto(pageURL, { waitUntil: 'load' });
    await expectStep(page, 'Step 1 of 3', `${mode}, first page`);
    await axeOn(page, resp, js, `${mode}, page 1`);
    await noSideways(page, `${mode}, page 1`);
    await page.getByLabel(/^Name/).fill(who.name);
    await page.getByLabel(/^Email/).fill(who.email);
    if (js) {
      // The background save: a few seconds after the last change, the draft's token arrives.
      await page.waitForResponse((r) => r.url().endsWith('/draft') && r.status() === 200, { timeout: 15000 });
      await page.waitForFunction(() => document.querySelector('input[name="_resume"]').value.startsWith('drf_'), null, { timeout: 5000 });
      const token = await page.locator('input[name="_resume"]').inputValue();
      if (!token.startsWith('drf_')) fail(`${mode}: the background save gave no resume token (${token})`);
      ok(`${mode}: the page saved in the background (${token.slice(0, 8)}…)`);
    }
    resp = await click(page, 'Next');
    await expectStep(page, 'Step 2 of 3', `${mode}, after Next`);
    await page.getByRole('radio', { name: who.colour }).check();
    resp = await click(page, 'Save and continue later');
    if (resp.status() !== 200) fail(`${mode}: save status ${resp.status()}`);
    await page.getByRole('heading', { name: 'Your answers are saved' }).waitFor();
    const link = await page.locator('#fw-resume-link').inputValue();
    if (!/\/f\/frm_[0-9A-Za-z]+\?resume=drf_/.test(link)) fail(`${mode}: resume link ${link}`);
    await axeOn(page, resp, js, `${mode}, the saved page`);
    await noSideways(page, `${mode}, the saved page`);
    await page.screenshot({ path: path.resolve(artifactDir, `resume-${js ? 'js' : 'nojs'}-${width}-saved.png`), fullPage: true });
    ok(`${mode}: saved with the link ${link.replace(/\.[^.]+$/, '.…')}`);
    if (then) await then(page);
    return link;
  } finally {
    await context.close();
  }
}

// emailOnce saves without JavaScript and has the link emailed: an address with a typo is
// refused next to its input with the typed text kept, then the right one is sent.
async function emailOnce(browser, who) {
  const mode = 'JavaScript off, email';
  const link = await saveOnce(browser, false, 1280, who, async (page) => {
    await page.getByLabel('Email me the link').fill('quokka@example');
    let resp = await click(page, 'Send the link');
    if (resp.status() !== 422) fail(`${mode}: a bad address answers ${resp.status()}`);
    if ((await page.getByLabel('Email me the link').inputValue()) !== 'quokka@example') fail(`${mode}: the typed address is lost`);
    if (!(await page.locator('#fw-resume-email-error').innerText()).includes('email address')) fail(`${mode}: no error next to the address`);
    await axeOn(page, resp, false, `${mode}, refused address`);
    await page.getByLabel('Email me the link').fill(who.email);
    resp = await click(page, 'Send the link');
    if (resp.status() !== 200) fail(`${mode}: send status ${resp.status()}`);
    const sent = await page.locator('.sent').innerText();
    if (!sent.includes(who.email)) fail(`${mode}: no confirmation: ${sent}`);
    await axeOn(page, resp, false, `${mode}, link sent`);
    ok(`${mode}: the link was emailed to ${who.email}`);
  });
  console.log('saved-link: ' + link);
}

async function walk(browser, js, width, who) {
  const mode = `${js ? 'JavaScript on' : 'JavaScript off'}, ${width} px`;
  const link = await saveOnce(browser, js, width, who);
  // Later, elsewhere: a fresh context opens the link.
  const context = await browser.newContext({ javaScriptEnabled: js, viewport: { width, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  try {
    let resp = await page.goto(link, { waitUntil: 'load' });
    if (resp.status() !== 200) fail(`${mode}: resume status ${resp.status()}`);
    await expectStep(page, 'Step 2 of 3', `${mode}, resumed`);
    if (!(await page.getByRole('radio', { name: who.colour }).isChecked())) fail(`${mode}: the saved colour is not chosen`);
    if (!(await page.locator('#fw-notice').innerText()).includes('Welcome back')) fail(`${mode}: no welcome-back notice`);
    await axeOn(page, resp, js, `${mode}, resumed page 2`);
    await page.screenshot({ path: path.resolve(artifactDir, `resume-${js ? 'js' : 'nojs'}-${width}-resumed.png`), fullPage: true });
    resp = await click(page, 'Back');
    await expectStep(page, 'Step 1 of 3', `${mode}, back to page 1`);
    if ((await page.getByLabel(/^Name/).inputValue()) !== who.name) fail(`${mode}: the saved name is not on page 1`);
    resp = await click(page, 'Next');
    resp = await click(page, 'Next');
    await expectStep(page, 'Step 3 of 3', `${mode}, page 3`);
    await page.getByLabel(/^Comments/).fill(`Finished later (${mode})`);
    resp = await click(page, 'Submit');
    if (resp.status() !== 200) fail(`${mode}: submit status ${resp.status()}`);
    await page.getByRole('heading', { name: 'Thank you!' }).waitFor();
    await axeOn(page, resp, js, `${mode}, thank-you page`);
    resp = await page.goto(link, { waitUntil: 'load' });
    const text = await page.locator('body').innerText();
    if (resp.status() !== 410 || !text.includes('already used') || text.includes(who.name)) {
      fail(`${mode}: a used link answers ${resp.status()}: ${text.slice(0, 200)}`);
    }
    ok(`${mode}: resumed in a fresh context, submitted, and the link then says it was used`);
  } finally {
    await context.close();
  }
}

async function main() {
  fs.mkdirSync(artifactDir, { recursive: true });
  const browser = await launch();
  try {
    axeContext = await browser.newContext();
    const people = [
      { name: 'Ada Lovelace', email: 'ada@example.org', colour: 'Blue' },
      { name: 'Grace Hopper', email: 'grace@example.org', colour: 'Red' },
      { name: 'Alan Turing', email: 'alan@example.org', colour: 'Blue' },
      { name: 'Edsger Dijkstra', email: 'edsger@example.org', colour: 'Red' },
    ];
    let i = 0;
    for (const js of [true, false]) {
      for (const width of [390, 1280]) await walk(browser, js, width, people[i++]);
    }
    // The one who never comes back: the link is emailed (a typo first), then left unused.
    await emailOnce(browser, { name: 'Zanzibar Quokka', email: 'quokka@example.org', colour: 'Red' });
  } finally {
    await browser.close();
  }
}

run(main);
