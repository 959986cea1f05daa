// Browser test of the respondent privacy requests page, run by test/dashboard_browser_test.go
// (TestPrivacyBrowser):
//
//   node test/browser/privacy.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner sets up the account, creates an admin API key in the dashboard and, through
// the API, two forms with an email field and submissions from two respondents. Then, on
// Settings › Privacy requests, driven from the keyboard: an invalid address (the error next to
// the field), Export (a JSON download with the respondent's submissions from both forms),
// Erase (a confirmation page counting them, then the count deleted), and the audit log holding
// the events but never the address. axe-core on every page at desktop width and 375 px: zero
// violations. Screenshots: <artifact dir>/privacy-<page>.png and privacy-<page>-375.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import fs from 'node:fs';
import path from 'node:path';
import { api as callAPI, args, checker, createKey, fail, inBrowser, ok, run, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('privacy.spec.mjs');
const { check, checkDark, shots } = checker(artifactDir, 'privacy');

// api calls the API and fails on an error status; it returns the decoded body.
async function api(method, url, key, body) {
  const r = await callAPI(baseURL, method, url, key, body);
  if (r.status >= 300) fail(`${method} ${url}: ${r.status} ${r.text}`);
  return r.json;
}

const respondent = 'jane.doe@example.net';

// press sends key to the focused element and waits for the navigation it causes.
async function pressAndWait(page, key) {
  const [resp] = await Promise.all([page.waitForNavigation(), page.keyboard.press(key)]);
  return resp;
}

// tabTo presses Tab until the focused element's accessible text matches re.
async function tabTo(page, re, what) {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const label = await page.evaluate(() => {
      const el = document.activeElement;
      return el ? (el.innerText || el.getAttribute('aria-label') || el.id || '').trim() : '';
    });
    if (re.test(label)) return;
  }
  fail(`Tab never reaches ${what}`);
}

async function main({ page }) {
  // Setup, then an admin key to seed data through the API.
  await setUp(page, setupURL);
  let resp;
  const key = await createKey(page, baseURL, 'Privacy seed', 'admin');
  const ids = { jane: [], other: [] };
  const others = [];
  for (const name of ['Contact', 'Newsletter']) {
    const f = await api('POST', '/v1/forms', key, { name, fields: [{ label: 'Name', type: 'text' }, { label: 'Email', type: 'email' }] });
    const [nameField, emailField] = f.fields.map((x) => x.id);
    for (const [who, email] of [['jane', name === 'Contact' ? 'Jane.Doe@Example.net' : respondent], ['other', 'someone@example.net']]) {
      const s = await api('POST', `/v1/forms/${f.id}/submissions`, key, { data: { [nameField]: `${who} in ${name}`, [emailField]: email } });
      ids[who].push(s.id);
      if (who === 'other') others.push([f.id, s.id]);
    }
  }
  ok('seeded two forms with submissions from two respondents through the API');

  // The page, reached from the navigation.
  await page.goto(baseURL + '/app/forms');
  await submit(page, page.getByRole('link', { name: 'Privacy requests' }));
  if (!page.url().endsWith('/app/settings/privacy')) fail(`the nav link leads to ${page.url()}`);
  if ((await page.getByRole('link', { name: 'Privacy requests' }).getAttribute('aria-current')) !== 'page') fail('the nav does not mark the page');
  await check(page, 'page');

  // Keyboard: an invalid address, submitted with Enter.
  await page.getByLabel("Respondent's email address").focus();
  await page.keyboard.type('not an address');
  resp = await pressAndWait(page, 'Enter');
  if (resp.status() !== 422) fail(`an invalid address: status ${resp.status()}`);
  const err = (await page.locator('.field-error').first().innerText()).trim();
  if (!err) fail('no error next to the address field');
  if ((await page.getByLabel("Respondent's email address").getAttribute('aria-invalid')) !== 'true') fail('the field is not marked invalid');
  await check(page, 'invalid');
  ok(`an invalid address is refused next to the field: "${err}"`);

  // Export, from the keyboard: Tab to the button, Enter starts the download.
  const field = page.getByLabel("Respondent's email address");
  await field.fill('');
  await field.focus();
  await page.keyboard.type(respondent.toUpperCase());
  await tabTo(page, /^Export/, 'the Export button');
  const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  const file = path.resolve(artifactDir, 'privacy-export.json');
  await download.saveAs(file);
  const exported = JSON.parse(fs.readFileSync(file, 'utf8'));
  const got = exported.submissions.map((s) => s.id);
  if (JSON.stringify(got) !== JSON.stringify(ids.jane)) fail(`export holds ${JSON.stringify(got)}, want ${JSON.stringify(ids.jane)}`);
  if (download.suggestedFilename().includes('jane')) fail(`the download is named after the address: ${download.suggestedFilename()}`);
  ok(`Export downloaded ${download.suggestedFilename()} with the respondent's ${got.length} submissions from both forms`);

  // Erase: Tab to the button, a confirmation page with the count, then confirm.
  await tabTo(page, /^Erase/, 'the Erase button');
  resp = await pressAndWait(page, 'Enter');
  if (resp.status() !== 200) fail(`erase confirmation: ${resp.status()}`);
  const confirmText = await page.locator('main').innerText();
  if (!confirmText.includes('2 submissions in 2 forms')) fail(`the confirmation page: ${confirmText}`);
  await check(page, 'erase-confirm');
  await tabTo(page, /^Erase 2 submissions/, 'the confirming button');
  await pressAndWait(page, 'Enter');
  if (!page.url().endsWith('/app/settings/privacy')) fail(`after erasing: ${page.url()}`);
  const notice = (await page.locator('[role=status]').first().innerText()).trim();
  if (!/2 submissions deleted/.test(notice)) fail(`after erasing the notice says "${notice}"`);
  await check(page, 'erased');
  ok(`erased: "${notice}"`);

  for (const [fid, id] of others) {
    const s = await api('GET', `/v1/forms/${fid}/submissions/${id}`, key);
    if (s.id !== id) fail(`another respondent's submission ${id}: ${JSON.stringify(s)}`);
  }
  ok("the other respondent's submissions remain");

  await page.goto(baseURL + '/app/settings/audit-log');
  const log = await page.locator('main').innerText();
  if (!log.includes('privacy.exported') || !log.includes('privacy.erased')) fail(`audit log: ${log.slice(0, 600)}`);
  if (log.toLowerCase().includes(respondent)) fail('the audit log shows the address');
  ok('the audit log has privacy.exported and privacy.erased, without the address');
}

run(() => inBrowser(main, { acceptDownloads: true }));
