// Browser test of the form-backend mode (docs/form-backend.md), run by test/formbackend_test.go:
//
//   node test/browser/formbackend.spec.mjs <owner page> <form page> <artifact dir>
//
// The owner page is docs/form-backend-example.html served by the Go test on another origin
// than Formward's, pointing at a form that allows that origin and takes two submissions:
//   1. with JavaScript off, the plain HTML form posts across origins and the browser follows
//      the 303 to the owner's _next page;
//   2. with JavaScript on, the page's script posts the same form with fetch() (CORS, JSON
//      answer) and shows its thank-you text without leaving the page;
//   3. the form is now full: its page is the closed page with the owner's message, with zero
//      axe-core violations; a post from the owner's page gets the closed page (no script) or
//      the form_closed error with the owner's message (script). (axe-core runs in the scripted
//      context: a context without JavaScript cannot evaluate it.)
// Prints "ok: ..." lines; exits 1 after "FAIL: ...".
import path from 'node:path';
import { commandLine, expectNoAxeViolations, fail, launch, ok, run } from './kit.mjs';

const [ownerPage, formPage, artifactDir] = commandLine('formbackend.spec.mjs', 'owner page', 'form page', 'artifact dir');
const closedMessage = process.env.FORMWARD_CLOSED_MESSAGE || '';

async function fill(page, who) {
  await page.getByLabel('Name').fill(who.name);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Message').fill(who.message);
}

async function main() {
  const browser = await launch();
  try {
    const ownerOrigin = new URL(ownerPage).origin;
    if (ownerOrigin === new URL(formPage).origin) fail('the owner page must be on another origin');

    // 1. No JavaScript: a plain cross-origin form post, then the owner's _next page.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    let page = await plain.newPage();
    page.setDefaultTimeout(20000);
    await page.goto(ownerPage, { waitUntil: 'load' });
    await fill(page, { name: 'Grace Hopper', email: 'grace@example.org', message: 'Sent without JavaScript.' });
    await Promise.all([page.waitForURL((u) => u.pathname === '/thanks.html'), page.getByRole('button', { name: 'Send' }).click()]);
    if (new URL(page.url()).origin !== ownerOrigin) fail(`_next led to ${page.url()}`);
    await page.getByRole('heading', { name: 'Thanks!' }).waitFor();
    ok('without JavaScript the plain form posts across origins and lands on the owner\'s _next page');

    // 2. JavaScript: fetch() with FormData and Accept: application/json, the page stays.
    const scripted = await browser.newContext();
    page = await scripted.newPage();
    page.setDefaultTimeout(20000);
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(ownerPage, { waitUntil: 'load' });
    await fill(page, { name: 'Ada Lovelace', email: 'Ada@Example.org', message: 'Sent with fetch().' });
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Thank you! Your message was sent.').waitFor();
    if (page.url() !== ownerPage) fail(`the script left the page: ${page.url()}`);
    if (errors.length) fail(`page errors: ${errors.join('; ')}`);
    await page.screenshot({ path: path.resolve(artifactDir, 'form-backend.png'), fullPage: true });
    ok('with JavaScript the same form posts with fetch() (CORS) and shows the JSON answer in place');

    // 3. Full now (max_submissions 2): the closed page, accessible, with the owner's message.
    const closed = await scripted.newPage();
    const res = await closed.goto(formPage, { waitUntil: 'load' });
    if (res.status() !== 200) fail(`closed form page status ${res.status()}`);
    await closed.getByRole('heading', { name: 'This form is closed' }).waitFor();
    if (closedMessage && !(await closed.getByText(closedMessage).isVisible())) fail('the closed page lacks the owner\'s message');
    await closed.screenshot({ path: path.resolve(artifactDir, 'form-closed.png'), fullPage: true });
    await expectNoAxeViolations(closed, 'the closed page');
    ok('the full form shows the closed page with the owner\'s message (200)');

    await page.goto(ownerPage, { waitUntil: 'load' });
    await fill(page, { name: 'Late', email: 'late@example.org', message: 'Too late.' });
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('status').getByText(closedMessage || /closed/i).waitFor();
    ok('a scripted post to the full form shows the form_closed error');

    page = await plain.newPage();
    await page.goto(ownerPage, { waitUntil: 'load' });
    await fill(page, { name: 'Late', email: 'late2@example.org', message: 'Too late.' });
    await Promise.all([page.waitForURL((u) => u.origin !== ownerOrigin), page.getByRole('button', { name: 'Send' }).click()]);
    await page.getByRole('heading', { name: 'This form is closed' }).waitFor();
    if (closedMessage && !(await page.getByText(closedMessage).isVisible())) fail('the closed page after a post lacks the owner\'s message');
    ok('a plain post to the full form shows the closed page');
  } finally {
    await browser.close();
  }
}

run(main);
