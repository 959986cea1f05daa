// Browser test of a form's responses, export and analytics, run by TestResponsesBrowser
// (test/dashboard_browser_test.go):
//
//   node test/browser/responses.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner signs up from the logged link, creates an API key in the dashboard, creates a
// form and three submissions through the API, finds a response in the table, filters by a
// field's value, opens the detail, exports CSV (the progress panel reports the end) and compares
// the downloaded file with what was submitted, then opens the analytics page. axe-core runs on
// every page at desktop width and at 375 px: zero violations. Screenshots:
// <artifact dir>/responses-<page>.png and responses-<page>-375.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import fs from 'node:fs';
import { api as callAPI, args, checker, createKey, fail, inBrowser, ok, run, setUp } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('responses.spec.mjs');
const { check, checkDark, shots } = checker(artifactDir, 'responses');
const api = (method, url, key, body) => callAPI(baseURL, method, url, key, body);

// parseCSV reads RFC 4180 text (quoted fields, doubled quotes, CRLF).
function parseCSV(text) {
  const rows = [];
  let row = [], field = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\r') { /* part of CRLF */ }
    else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
    else field += c;
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

async function main({ ctx, page }) {
  await setUp(page, setupURL);

  const key = await createKey(page, baseURL, 'Responses test', 'read-write');

  const created = await api('POST', '/v1/forms', key, {
    name: 'Event sign-up',
    fields: [
      { label: 'Name', type: 'text', required: true },
      { label: 'Email', type: 'email' },
      { label: 'Sessions', type: 'checkbox', options: ['Morning', 'Afternoon'] },
      { label: 'Notes', type: 'textarea' },
    ],
  });
  if (created.status !== 201) fail(`POST /v1/forms: ${created.status}`);
  const form = created.json;
  const [fName, fEmail, fSessions, fNotes] = form.fields.map((f) => f.id);
  const sent = [
    { [fName]: 'Alan Turing', [fEmail]: 'alan@example.org', [fSessions]: ['Morning'], [fNotes]: 'Vegetarian' },
    { [fName]: 'Grace Hopper', [fEmail]: 'grace@example.org', [fSessions]: ['Morning', 'Afternoon'], [fNotes]: 'Needs a "quiet" room, please' },
    { [fName]: 'Edsger Dijkstra', [fEmail]: 'edsger@example.org', [fSessions]: ['Afternoon'], [fNotes]: '=SUM(1,2)' },
  ];
  const ids = [];
  for (const data of sent) {
    const r = await api('POST', `/v1/forms/${form.id}/submissions`, key, { data });
    if (r.status !== 201) fail(`POST submission: ${r.status} ${JSON.stringify(r.json)}`);
    ids.push(r.json.id);
  }
  ok('a form and three submissions created through the API');

  // Find a response in the table.
  await page.goto(baseURL + '/app/forms');
  await page.getByRole('link', { name: /3 responses to Event sign-up/ }).click();
  await page.waitForURL(`**/app/forms/${form.id}/responses`);
  const headers = await page.locator('table.responses thead th').allInnerTexts();
  for (const label of ['Name', 'Email', 'Sessions', 'Notes']) {
    if (!headers.some((h) => h.trim().toLowerCase() === label.toLowerCase())) fail(`no column titled ${label}: ${headers.join(', ')}`);
  }
  const rows = page.locator('table.responses tbody tr');
  if ((await rows.count()) !== 3) fail(`the table has ${await rows.count()} rows`);
  if (!(await rows.first().innerText()).includes('Edsger Dijkstra')) fail('the newest response is not first');
  await check(page, 'table');
  ok('the table shows the three responses newest first, one column per field');

  // Filter by a field's value, from the keyboard.
  await page.getByLabel('Field').selectOption({ label: 'Name' });
  await page.getByLabel('Answer contains').fill('grace');
  await Promise.all([page.waitForNavigation(), page.getByLabel('Answer contains').press('Enter')]);
  if ((await rows.count()) !== 1 || !(await rows.first().innerText()).includes('grace@example.org')) fail('the value filter does not find Grace');
  await check(page, 'filtered');
  ok('the value filter finds the one response');

  // The detail.
  await rows.first().getByRole('link').click();
  // The detail keeps the table's filters in its address (for Previous, Next and Back).
  await page.waitForURL((u) => u.pathname.endsWith(`/responses/${ids[1]}`));
  const detail = await page.locator('main').innerText();
  for (const want of ['Grace Hopper', 'Morning, Afternoon', 'API', ids[1]]) if (!detail.includes(want)) fail(`the detail lacks ${want}`);
  await check(page, 'detail');
  ok('the detail shows the answers and the metadata');

  // Export CSV through the button (progress panel, then the download) and compare.
  await page.goto(baseURL + `/app/forms/${form.id}/responses`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
  const file = await download.path();
  const csv = parseCSV(fs.readFileSync(file, 'utf8'));
  await page.locator('#export-status', { hasText: 'Export finished' }).waitFor();
  const header = csv[0];
  const col = (label) => header.indexOf(label);
  if (col('Name') < 0 || col('Sessions') < 0 || header[0] !== 'submission_id') fail(`CSV header: ${header.join(',')}`);
  if (csv.length !== 4) fail(`CSV has ${csv.length - 1} rows`);
  for (let i = 0; i < sent.length; i++) {
    const r = csv[i + 1];
    const notes = sent[i][fNotes].startsWith('=') ? "'" + sent[i][fNotes] : sent[i][fNotes];
    if (r[0] !== ids[i] || r[col('Name')] !== sent[i][fName] || r[col('Email')] !== sent[i][fEmail] ||
        r[col('Sessions')] !== sent[i][fSessions].join(', ') || r[col('Notes')] !== notes) {
      fail(`CSV row ${i}: ${r.join(' | ')}`);
    }
  }
  await check(page, 'exported');
  ok(`the CSV download (${download.suggestedFilename()}) holds exactly what was submitted, oldest first`);

  // Analytics.
  await page.getByRole('link', { name: 'Analytics' }).click();
  await page.waitForURL(`**/app/forms/${form.id}/analytics`);
  if ((await page.locator('svg.bars rect.bar').count()) !== 30) fail('the chart does not have 30 days');
  await page.getByText('Show the numbers as a table').first().click();
  await check(page, 'analytics');
  ok('the analytics page draws the chart with its table');

  await ctx.close();
  ok(`screenshots: ${shots.length} files in ${artifactDir}`);
}

run(() => inBrowser(main, { acceptDownloads: true }));
