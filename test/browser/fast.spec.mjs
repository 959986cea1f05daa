// Browser test of a fast respondent (autofill, a second try), run by test/browser_test.go
// (TestBrowserFastRespondent):
//
//   node test/browser/fast.spec.mjs <page url> <artifact dir>
//
// with FORMWARD_FAST_FORM (JSON): {"ids": {key: field ID}, "upload": "/path/to/file",
// "minFillSeconds": 3}. The form has the default spam rules (honeypot, render token with a
// minimum fill time) and one field of each type, a hidden field filled from the page URL and
// a file field. Every answer is filled in at once and sent at once:
//   1. JavaScript off: the server refuses the post for its timing (403) and draws the form
//      again with every answer in place, a notice (saying the file must be attached again)
//      and a fresh token; axe-core on that page (0 violations); the file attached again and
//      sent once the fill time has passed: the thank-you page;
//   2. JavaScript on: the page's script holds the post ("Sending…") until the fill time has
//      passed, so the answers never leave the page to be refused: the thank-you page, and no
//      post answered 403;
//   3. JavaScript on, the post sent before the page's script could hold it (as when the script
//      has not loaded yet): the form drawn again with the answers and the notice focused;
//      axe-core on it; sent again at once, the script holds it for the rest of the fill time:
//      the thank-you page.
// The Go test then checks the three submissions. Prints "ok: ..." lines, exits 0, or prints
// "FAIL: ..." and exits 1.
import fs from 'node:fs';
import path from 'node:path';
import { commandLine, expectNoAxeViolations, fail, launch, ok, run } from './kit.mjs';

const [pageURL, artifactDir] = commandLine('fast.spec.mjs', 'page url', 'artifact dir');
const spec = JSON.parse(process.env.FORMWARD_FAST_FORM || '{}');
const ids = spec.ids || {};
const minFill = Number(spec.minFillSeconds || 3) * 1000;

const answers = {
  name: 'Ada Lovelace',
  email: 'ada@example.org',
  comments: 'First line\nSecond <b>line</b> & "quotes"',
  ticket: 'Student',
  diet: 'Vegan',
  sessions: ['Keynote', 'Dinner'],
  arrival: '2026-03-14',
};

const input = (page, key) => page.locator(`#f-${ids[key]}`);
const option = (page, key, value) => page.locator(`input[name="${ids[key]}"][value="${value}"]`);

async function fillAll(page) {
  await input(page, 'name').fill(answers.name);
  await input(page, 'email').fill(answers.email);
  await input(page, 'comments').fill(answers.comments);
  await input(page, 'ticket').selectOption(answers.ticket);
  await option(page, 'diet', answers.diet).check();
  for (const s of answers.sessions) await option(page, 'sessions', s).check();
  await input(page, 'i_agree').check();
  await input(page, 'arrival').fill(answers.arrival);
  await input(page, 'cv').setInputFiles(spec.upload);
}

// expectAnswers checks that the page holds every answer (the file aside) and the hidden one.
async function expectAnswers(page, what, campaign) {
  const got = {
    name: await input(page, 'name').inputValue(),
    email: await input(page, 'email').inputValue(),
    comments: await input(page, 'comments').inputValue(),
    ticket: await input(page, 'ticket').inputValue(),
    arrival: await input(page, 'arrival').inputValue(),
  };
  for (const [k, v] of Object.entries(got)) {
    if (v !== answers[k]) fail(`${what}: ${k} is ${JSON.stringify(v)}, want ${JSON.stringify(answers[k])}`);
  }
  if (!(await option(page, 'diet', answers.diet).isChecked())) fail(`${what}: the radio answer is lost`);
  for (const s of ['Keynote', 'Workshops', 'Dinner']) {
    if ((await option(page, 'sessions', s).isChecked()) !== answers.sessions.includes(s)) fail(`${what}: checkbox ${s} is not as chosen`);
  }
  if (!(await input(page, 'i_agree').isChecked())) fail(`${what}: the single checkbox is lost`);
  const hidden = await page.locator(`input[type=hidden][name="${ids.campaign}"]`).inputValue();
  if (hidden !== campaign) fail(`${what}: the hidden field holds ${JSON.stringify(hidden)}, want ${campaign}`);
  if ((await input(page, 'cv').inputValue()) !== '') fail(`${what}: a file input cannot be filled again by the server`);
}

async function expectThanks(page, resp, what) {
  if (!resp || resp.status() !== 200) fail(`${what}: status ${resp && resp.status()}`);
  const heading = (await page.locator('h1').first().innerText()).trim();
  if (!/thank you/i.test(heading)) fail(`${what}: no thank-you page: ${(await page.locator('body').innerText()).slice(0, 300)}`);
}

// Without JavaScript nothing can be evaluated in the page, axe-core included: the page as the
// server sent it is checked in a JavaScript-enabled page at the same URL (its script left out).
async function axeOnServed(browser, url, html, what) {
  const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
  try {
    const copy = await context.newPage();
    await copy.route(url, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html.replace(/<script[^>]*><\/script>/g, '') }));
    await copy.goto(url, { waitUntil: 'load' });
    await expectNoAxeViolations(copy, what);
  } finally {
    await context.close();
  }
}

async function withoutJavaScript(browser) {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 800, height: 900 } });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(20000);
    await page.goto(`${pageURL}?campaign=fast-nojs`, { waitUntil: 'load' });
    const shown = Date.now();
    await fillAll(page);
    const [resp] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Submit' }).click()]);
    if (Date.now() - shown >= minFill) fail(`JavaScript off: filling took ${Date.now() - shown} ms, not faster than the fill time`);
    if (resp.status() !== 403) fail(`JavaScript off, sent at once: status ${resp.status()}, want 403 with the form again`);
    const notice = page.locator('#fw-notice');
    const text = await notice.innerText();
    if (!/Your answers are kept/.test(text) || !/attach them again/.test(text)) fail(`JavaScript off: the notice says ${JSON.stringify(text)}`);
    if ((await notice.getAttribute('role')) !== 'alert') fail('JavaScript off: the notice is not announced (role=alert)');
    await expectAnswers(page, 'JavaScript off, the form drawn again', 'fast-nojs');
    ok('JavaScript off: sent too fast, the form comes back with every answer and a notice (403)');
    await axeOnServed(browser, page.url(), await resp.text(), 'the form drawn again (JavaScript off)');
    await page.screenshot({ path: path.resolve(artifactDir, 'fast-nojs-again.png'), fullPage: true });

    await input(page, 'cv').setInputFiles(spec.upload);
    const left = minFill + 300 - (Date.now() - shown);
    if (left > 0) await page.waitForTimeout(left);
    const [thanks] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Submit' }).click()]);
    await expectThanks(page, thanks, 'JavaScript off, sent again');
    ok('JavaScript off: sent again once the fill time has passed, accepted');
  } finally {
    await context.close();
  }
}

async function withJavaScript(browser) {
  const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(20000);
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const posts = [];
    page.on('response', (r) => {
      if (r.request().method() === 'POST' && new URL(r.url()).pathname === new URL(pageURL).pathname) posts.push(r.status());
    });
    await page.goto(`${pageURL}?campaign=fast-js`, { waitUntil: 'load' });
    const shown = Date.now();
    await fillAll(page);
    const clicked = Date.now();
    if (clicked - shown >= minFill) fail(`JavaScript on: filling took ${clicked - shown} ms, not faster than the fill time`);
    const nav = page.waitForNavigation();
    await page.getByRole('button', { name: 'Submit' }).click();
    const status = (await page.locator('#fw-status').innerText()).trim();
    if (status !== 'Sending…' || !(await page.getByRole('button', { name: 'Submit' }).isDisabled())) {
      fail(`JavaScript on: while the post is held the status says ${JSON.stringify(status)}`);
    }
    const resp = await nav;
    const held = Date.now() - clicked;
    await expectThanks(page, resp, 'JavaScript on');
    if (posts.length !== 1 || posts[0] !== 200) fail(`JavaScript on: the posts were answered ${posts.join(', ')}, want one 200`);
    ok(`JavaScript on: the script held the post ${held} ms ("Sending…") and it was accepted at once, no refusal`);

    // The post leaves before the page's script can hold it (the script had not loaded yet).
    await page.goto(`${pageURL}?campaign=fast-js-refused`, { waitUntil: 'load' });
    const again = Date.now();
    await fillAll(page);
    const [refused] = await Promise.all([
      page.waitForNavigation(),
      page.locator('#fw-form').evaluate((form) => HTMLFormElement.prototype.submit.call(form)),
    ]);
    if (refused.status() !== 403) fail(`JavaScript on, sent past the script: status ${refused.status()}, want 403`);
    await expectAnswers(page, 'JavaScript on, the form drawn again', 'fast-js-refused');
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
    if (focused !== 'fw-notice') fail(`JavaScript on: the focus is on ${JSON.stringify(focused)}, not the notice`);
    const wait = Number(await page.locator('#fw-form').getAttribute('data-wait'));
    if (!(wait >= 1 && wait <= minFill / 1000)) fail(`JavaScript on: data-wait is ${wait}`);
    ok(`JavaScript on: the form drawn again keeps every answer, the notice has the focus, the script holds the next post ${wait} s at most`);
    await expectNoAxeViolations(page, 'the form drawn again (JavaScript on)');
    await page.screenshot({ path: path.resolve(artifactDir, 'fast-js-again.png'), fullPage: true });

    await input(page, 'cv').setInputFiles(spec.upload);
    posts.length = 0;
    const [thanks] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Submit' }).click()]);
    await expectThanks(page, thanks, 'JavaScript on, sent again');
    if (Date.now() - again < minFill - 1000) fail('JavaScript on: the post was sent before the fill time had passed');
    if (posts.join(',') !== '200') fail(`JavaScript on, sent again: answered ${posts.join(', ')}`);
    ok('JavaScript on: sent again at once, the script waited out the fill time, accepted');
    if (errors.length) fail(`JavaScript on: errors in the page: ${errors.join(' | ')}`);
  } finally {
    await context.close();
  }
}

run(async () => {
  fs.mkdirSync(artifactDir, { recursive: true });
  const browser = await launch();
  try {
    await withoutJavaScript(browser);
    await withJavaScript(browser);
  } finally {
    await browser.close();
  }
});
