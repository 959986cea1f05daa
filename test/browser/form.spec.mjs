// Browser test of the public form page, run by test/browser_test.go:
//
//   node test/browser/form.spec.mjs <page url> <artifact dir>
//
// with FORMWARD_BROWSER_FORM (JSON) describing the form the Go test created:
//   {"fields": [{"id", "label", "type", "required", "options", "value"}], "upload": "/path/to/file",
//    "minFillSeconds": 1}
// A field's optional "help" must be shown and named by the control's (a group's) aria-describedby.
//
// playwright-core drives Debian's /usr/bin/chromium (no browser download). The script:
//   1. opens the page and saves a screenshot (<artifact dir>/form.png);
//   2. keyboard only: Tab reaches every field and the submit button, each with a visible focus;
//   3. submits with a required field empty, once stopped by the page's script and once through
//      the server: the error is next to that field (aria-describedby points at visible error
//      text) and the values typed elsewhere are still in place;
//   4. fills every field (options, boxes, date, a file through setInputFiles) and submits: the
//      page's own JavaScript solves the proof-of-work challenge (the post carries an ALTCHA
//      solution), then the thank-you screen.
// Also a phone-sized screenshot (form-phone.png; the page must not scroll sideways at 375 px),
// and axe-core (pinned in package-lock.json) on the form, on its error state (the server's page)
// and on the thank-you page: zero violations of any impact.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import fs from 'node:fs';
import path from 'node:path';
import { axeSource, commandLine, fail, launch, ok, run } from './kit.mjs';

const [pageURL, artifactDir] = commandLine('form.spec.mjs', 'page url', 'artifact dir');
const spec = JSON.parse(process.env.FORMWARD_BROWSER_FORM || '{"fields": []}');
const STEP_TIMEOUT = 20000;


// The control(s) of a field, found the way a screen reader user finds them: by accessible name.
// A required field's name ends in "(required)" (the visible "*" is aria-hidden, but part of the
// label's text, which getByLabel also matches). Fields with
// options are a group (fieldset/legend) named by the field label, each option a control
// labelled by its text.
function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
function nameOf(f) {
  return new RegExp('^\\s*' + escapeRe(f.label) + '(\\s*\\*)?(\\s*\\(required\\))?\\s*$');
}
function groupOf(page, f) {
  return page.getByRole('group', { name: nameOf(f) }).or(page.getByRole('radiogroup', { name: nameOf(f) })).first();
}
function controlOf(page, f, option) {
  if ((f.type === 'checkbox' && f.options?.length) || f.type === 'radio') {
    const role = f.type === 'radio' ? 'radio' : 'checkbox';
    const g = groupOf(page, f);
    return option === undefined ? g.getByRole(role).first() : g.getByRole(role, { name: option, exact: true });
  }
  return page.getByLabel(nameOf(f));
}

async function fillField(page, f, { withFile = true } = {}) {
  const v = f.value;
  switch (f.type) {
    case 'dropdown':
      await controlOf(page, f).selectOption({ label: v });
      break;
    case 'radio':
      await controlOf(page, f, v).check();
      break;
    case 'checkbox':
      if (f.options?.length) {
        for (const o of v) await controlOf(page, f, o).check();
      } else if (v) {
        await controlOf(page, f).check();
      }
      break;
    case 'file':
      if (withFile) await controlOf(page, f).setInputFiles(spec.upload);
      break;
    default: // text, email, number, textarea, date (fill takes YYYY-MM-DD for a date input)
      await controlOf(page, f).fill(String(v));
  }
}

async function readField(page, f) {
  switch (f.type) {
    case 'radio':
      return (await controlOf(page, f, f.value).isChecked()) ? f.value : null;
    case 'checkbox':
      if (f.options?.length) {
        const got = [];
        for (const o of f.options) if (await controlOf(page, f, o).isChecked()) got.push(o);
        return got;
      }
      return await controlOf(page, f).isChecked();
    case 'dropdown':
      return await controlOf(page, f).evaluate((el) => el.selectedOptions[0]?.textContent.trim() ?? null);
    default:
      return await controlOf(page, f).inputValue();
  }
}

// Clicks submit and returns the POST the page then sends (the page's script first solves the
// proof-of-work challenge, puts the solution into the hidden "altcha" input and submits).
async function submitAndCapturePost(page) {
  const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().includes('/f/'), { timeout: STEP_TIMEOUT });
  const t0 = Date.now();
  await page.locator('form button[type=submit], form input[type=submit]').first().click();
  const req = await posted;
  const body = (req.postDataBuffer() || Buffer.alloc(0)).toString('latin1');
  // urlencoded "altcha=..." or a multipart part named "altcha".
  const m = body.match(/name="altcha"\r\n\r\n([^\r\n]*)/) || body.match(/(?:^|&)altcha=([^&]*)/);
  return { body: body.length > 0, altcha: m ? decodeURIComponent(m[1]) : '', ms: Date.now() - t0 };
}

function expectProofOfWork(post) {
  if (!post.altcha) fail('the post carries no proof-of-work solution (hidden "altcha" input empty)');
  let sol;
  try {
    sol = JSON.parse(Buffer.from(post.altcha, 'base64').toString('utf8'));
  } catch {
    fail('the proof-of-work solution is not base64 JSON: ' + post.altcha.slice(0, 80));
  }
  if (sol.algorithm !== 'SHA-256' || typeof sol.number !== 'number' || !sol.signature) {
    fail('the proof-of-work solution is not an ALTCHA payload: ' + JSON.stringify(sol));
  }
  return sol;
}

// min_fill_seconds: a person takes some time; wait so the post is not "too fast".
async function waitMinFill(since) {
  const wait = (spec.minFillSeconds || 0) * 1000 + 300 - (Date.now() - since);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

async function expectErrorNextTo(page, f, where) {
  const input = controlOf(page, f);
  await input.waitFor();
  const describedBy = await input.getAttribute('aria-describedby');
  if (!describedBy) fail(`${where}: "${f.label}" has no aria-describedby`);
  const texts = [];
  for (const id of describedBy.split(/\s+/).filter(Boolean)) {
    const el = page.locator(`[id="${id}"]`);
    if ((await el.count()) === 1 && (await el.isVisible())) {
      texts.push({ id, text: (await el.innerText()).trim(), error: await el.evaluate((n) => n.classList.contains('field-error')) });
    }
  }
  const err = texts.find((t) => t.text.length > 0 && t.error);
  if (!err) fail(`${where}: aria-describedby="${describedBy}" of "${f.label}" points at no visible error text`);
  if ((await input.getAttribute('aria-invalid')) !== 'true') fail(`${where}: "${f.label}" is not aria-invalid="true"`);
  const fieldBox = await input.boundingBox();
  const errBox = await page.locator(`[id="${err.id}"]`).boundingBox();
  if (fieldBox && errBox && Math.abs(errBox.y - fieldBox.y) > 150) {
    fail(`${where}: the error of "${f.label}" is ${Math.round(Math.abs(errBox.y - fieldBox.y))}px away from it`);
  }
  return err.text;
}

// Every field with help text shows it, and the control (the fieldset of a group) names it in
// aria-describedby.
async function expectHelp(page, where) {
  const norm = (s) => s.replace(/\s+/g, ' ').trim();
  const helped = spec.fields.filter((f) => f.help);
  for (const f of helped) {
    const grouped = (f.type === 'checkbox' && f.options?.length) || f.type === 'radio';
    const target = grouped ? groupOf(page, f) : controlOf(page, f);
    const describedBy = (await target.getAttribute('aria-describedby')) || '';
    let found = false;
    for (const id of describedBy.split(/\s+/).filter(Boolean)) {
      const el = page.locator(`[id="${id}"]`);
      if ((await el.count()) === 1 && (await el.isVisible()) && norm(await el.innerText()) === norm(f.help)) found = true;
    }
    if (!found) fail(`${where}: the help of "${f.label}" is not shown or not in its aria-describedby ("${describedBy}")`);
  }
  return helped.length;
}

async function expectValuesKept(page, skip, where) {
  for (const f of spec.fields) {
    if (f === skip || f.type === 'file') continue;
    const got = await readField(page, f);
    if (JSON.stringify(got) !== JSON.stringify(f.value)) {
      fail(`${where}: "${f.label}" holds ${JSON.stringify(got)}, want ${JSON.stringify(f.value)} (kept)`);
    }
  }
}

async function expectFocusVisible(page, what) {
  const style = await page.evaluate(() => {
    const el = document.activeElement;
    const cs = getComputedStyle(el);
    return {
      focusVisible: el.matches(':focus-visible'),
      outlineStyle: cs.outlineStyle,
      outlineWidth: parseFloat(cs.outlineWidth) || 0,
      boxShadow: cs.boxShadow,
    };
  });
  const drawn = (style.outlineStyle !== 'none' && style.outlineWidth > 0) || (style.boxShadow && style.boxShadow !== 'none');
  if (!style.focusVisible || !drawn) fail(`focus on ${what} is not visible: ${JSON.stringify(style)}`);
}

// Runs axe-core in the page (evaluated over the DevTools protocol, so the page's
// Content-Security-Policy, which allows no inline script, stays as it is) and fails on any
// violation, listing each rule with its impact and the elements it found.
async function expectNoAxeViolations(page, what) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return {
      version: window.axe.version,
      passes: r.passes.length,
      violations: r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => n.target.join(' ') + ' ' + n.html.slice(0, 160)),
      })),
    };
  });
  if (result.violations.length) {
    const list = result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.join(' | ')}`);
    fail(`axe-core ${result.version} on ${what}: ${result.violations.length} violation(s): ${list.join('; ')}`);
  }
  ok(`axe-core ${result.version} on ${what}: 0 violations (${result.passes} rules passed)`);
}

async function keyboardOnly(page) {
  // Mark the first control of each field, then Tab from the top of the page and see what we reach.
  const targets = new Map();
  for (const [i, f] of spec.fields.entries()) {
    await controlOf(page, f).first().evaluate((el, i) => el.setAttribute('data-kb-target', String(i)), i);
    targets.set(String(i), f.label);
  }
  const submit = page.locator('form button[type=submit], form input[type=submit]').first();
  await submit.evaluate((el) => el.setAttribute('data-kb-target', 'submit'));
  targets.set('submit', 'the submit button');

  await page.evaluate(() => {
    document.activeElement?.blur();
    window.scrollTo(0, 0);
  });
  await page.locator('body').focus().catch(() => {});
  const reached = new Set();
  for (let i = 0; i < 80 && reached.size < targets.size; i++) {
    await page.keyboard.press('Tab');
    const mark = await page.evaluate(() => document.activeElement?.getAttribute('data-kb-target'));
    if (mark !== null && mark !== undefined && targets.has(mark) && !reached.has(mark)) {
      reached.add(mark);
      await expectFocusVisible(page, targets.get(mark));
    }
  }
  const missed = [...targets.keys()].filter((k) => !reached.has(k)).map((k) => targets.get(k));
  if (missed.length) fail(`Tab never reached: ${missed.join(', ')}`);
  ok(`keyboard: Tab reached all ${spec.fields.length} fields and the submit button, each with a visible focus`);

  // Space checks a focused checkbox: the whole form is usable without a mouse.
  const single = spec.fields.find((f) => f.type === 'checkbox' && !f.options?.length);
  if (single) {
    const box = controlOf(page, single);
    await box.focus();
    await page.keyboard.press('Space');
    if (!(await box.isChecked())) fail(`Space did not check "${single.label}"`);
    await page.keyboard.press('Space');
    ok(`keyboard: Space toggles "${single.label}"`);
  }
}

async function main() {
  fs.mkdirSync(artifactDir, { recursive: true });
  // launch() starts Chromium with a new, empty profile of its own (a fresh --user-data-dir that
  // Playwright creates and removes; it refuses the flag in args).
  const browser = await launch();
  const consoleErrors = [];
  try {
    const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    page.on('console', (m) => {
      // The 422 of the deliberate invalid post is logged by Chromium as a failed resource load.
      if (m.type() === 'error' && !/status of 422/.test(m.text())) consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));

    // 1. The page and its screenshot.
    const resp = await page.goto(pageURL, { waitUntil: 'load' });
    if (!resp || resp.status() !== 200) fail(`GET ${pageURL}: status ${resp?.status()}`);
    for (const f of spec.fields) {
      if ((await controlOf(page, f).count()) === 0) fail(`no control labelled "${f.label}" (${f.type})`);
    }
    ok(`page ${pageURL} shows a labelled control for each of the ${spec.fields.length} fields`);
    ok(`help text shown and named by aria-describedby for ${await expectHelp(page, 'the form')} fields`);
    await expectNoAxeViolations(page, 'the form');
    const shot = path.resolve(artifactDir, 'form.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log('screenshot: ' + shot);

    // Readable on a phone: no sideways scrolling at 375 px.
    const phone = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
    const phonePage = await phone.newPage();
    await phonePage.goto(pageURL, { waitUntil: 'load' });
    const widths = await phonePage.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
    if (widths.scroll > widths.inner) fail(`on a 375 px phone the page scrolls sideways (${widths.scroll} px wide)`);
    await expectNoAxeViolations(phonePage, 'the form at 375 px');
    await phonePage.screenshot({ path: path.resolve(artifactDir, 'form-phone.png'), fullPage: true });
    await phone.close();
    ok(`phone (375 px): no sideways scrolling; screenshot ${path.resolve(artifactDir, 'form-phone.png')}`);

    // 2. Keyboard only.
    await keyboardOnly(page);
    await page.reload({ waitUntil: 'load' });

    // 3. A required field left empty. First the page's script: it stops the post and shows the
    // error next to the field. Then a client without that check (the attribute removed): the
    // server answers with the page again, the error next to the field, every value kept.
    const empty = spec.fields.find((f) => f.required && ['text', 'email', 'textarea'].includes(f.type));
    if (!empty) fail('the form needs a required text field for the error check');
    let loaded = Date.now();
    for (const f of spec.fields) if (f !== empty && f.type !== 'file') await fillField(page, f);
    await page.locator('form button[type=submit], form input[type=submit]').first().click();
    let text = await expectErrorNextTo(page, empty, 'in the browser');
    await expectValuesKept(page, empty, 'in the browser');
    await expectHelp(page, "the form with the script's error");
    ok(`the page's script shows the error next to "${empty.label}" (aria-describedby -> "${text}") and keeps every value`);
    await expectNoAxeViolations(page, "the form with the script's error");

    await controlOf(page, empty).evaluate((el) => {
      el.required = false;
    });
    await waitMinFill(loaded);
    const bad = await submitAndCapturePost(page);
    await page.waitForLoadState('load');
    text = await expectErrorNextTo(page, empty, 'from the server');
    await expectValuesKept(page, empty, 'from the server');
    await expectHelp(page, "the server's error page");
    ok(`the server's page shows the error next to "${empty.label}" (aria-describedby -> "${text}") and keeps every value`);
    await expectNoAxeViolations(page, "the server's error page");
    await page.screenshot({ path: path.resolve(artifactDir, 'form-errors.png'), fullPage: true });
    const badSol = expectProofOfWork(bad);
    ok(`that post carried the page's proof-of-work solution (ALTCHA, number ${badSol.number}, click to post ${bad.ms} ms)`);
    loaded = Date.now();

    // 4. Everything filled, a file attached; the page solves the proof of work, then posts.
    for (const f of spec.fields) await fillField(page, f);
    await waitMinFill(loaded);
    const good = await submitAndCapturePost(page);
    if (good.body) {
      const sol = expectProofOfWork(good);
      ok(`proof-of-work solved by the page's script before the post (number ${sol.number}, click to post ${good.ms} ms)`);
    } else {
      // Playwright does not expose a multipart body that carries a file; the server, with
      // proof_of_work on, accepts the post only with a valid solution (the thank-you below).
      ok(`posted with the file after the page's script ran (click to post ${good.ms} ms); the server checks the solution`);
    }
    try {
      await page.getByRole('heading', { name: /thank you/i }).first().waitFor({ timeout: STEP_TIMEOUT });
    } catch (e) {
      await page.screenshot({ path: path.resolve(artifactDir, 'form-failed.png'), fullPage: true }).catch(() => {});
      const shown = (await page.locator('body').innerText().catch(() => '')).replace(/\s+/g, ' ').slice(0, 600);
      fail(`no thank-you screen after the complete post; the page shows: ${shown}`);
    }
    ok('thank-you screen: ' + JSON.stringify((await page.locator('main, body').first().innerText()).trim().replace(/\s+/g, ' ').slice(0, 120)));
    await page.screenshot({ path: path.resolve(artifactDir, 'form-thanks.png'), fullPage: true });
    await expectNoAxeViolations(page, 'the thank-you page');

    if (consoleErrors.length) fail('errors in the browser console: ' + consoleErrors.join(' | '));
  } finally {
    await browser.close();
  }
}

run(main);
