// Browser test of a responses table people can read, run by TestResponsesTableBrowser
// (test/dashboard_browser_test.go):
//
//   node test/browser/responses_table.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner signs up, creates an API key, a form of twelve fields with long names,
// emails, a 300-character paragraph, choices, numbers and dates, and 500 responses through the
// API (concurrent requests), plus one from the public form page. At 1280 px no word of any
// rendered cell is broken across lines (every word of every text node has its boxes on one
// line), the page itself does not scroll sideways, the table's header row and first column
// stay put when the table scrolls inside its card, and a long answer opens with "Show all". At
// 390 px every response is a card whose labels and values never overlap and whose empty
// answers are left out. A column is hidden and two are swapped in the Columns panel, and after
// a reload the choice stays (saved in place by the script, the table redrawn). The table is filtered by an answer and by the source, a response
// opened and Next pressed lands on the next one. axe-core runs on the table and the detail at
// desktop width, at 390 px and at 375 px: zero violations. Screenshots:
// <artifact dir>/responses-table-<page>.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import path from 'node:path';
import { api as callAPI, args, axe, checker, createKey, fail, inBrowser, ok, run, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('responses_table.spec.mjs');
const { check, checkDark, shots } = checker(artifactDir, 'responses-table');
const api = (method, url, key, body) => callAPI(baseURL, method, url, key, body);
const phone390 = { width: 390, height: 844 };

const names = ['Edsger Wybe Dijkstra', 'Barbara Jane Liskov', 'Frances Elizabeth Allen', 'Donald Ervin Knuth',
  'Margaret Heafield Hamilton', 'Charles Antony Richard Hoare', 'Niklaus Emil Wirth', 'Grace Brewster Murray Hopper',
  'Kristen Nygaard', 'Adele Goldberg', 'John Warner Backus', 'Radia Joy Perlman'];
const paragraph = 'Wrote about structured programming, the shortest path through a weighted graph, semaphores ' +
  'for cooperating sequential processes, and the discipline of deriving a program together with its proof of ' +
  'correctness; taught for many years and kept a long series of handwritten notes that colleagues copied and ' +
  'passed around the world by mail.';

// wordsBrokenAcrossLines returns the words of the rendered cells (headers included) whose
// boxes sit on more than one line: a word cut mid-word. Text split by <wbr> (emails, links)
// is separate text nodes, so a break there is not counted.
function wordsBrokenAcrossLines() {
  const broken = [];
  for (const cell of document.querySelectorAll('table.responses th, table.responses td')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el.getClientRects().length || el.closest('.visually-hidden')) continue;
      const re = /\S+/g;
      for (let m = re.exec(n.data); m; m = re.exec(n.data)) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const lines = new Set(Array.from(r.getClientRects()).filter((x) => x.width > 0).map((x) => Math.round(x.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}

// cardOverlaps measures the phone cards: for each of the first rows, the shown cells, their
// labels (the cell's left part) and values must not overlap, and no empty answer is shown.
function cardOverlaps() {
  const problems = [];
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const rows = Array.from(document.querySelectorAll('table.responses tbody tr')).slice(0, 10);
  for (const [i, tr] of rows.entries()) {
    const cells = Array.from(tr.querySelectorAll('td')).filter((td) => td.getClientRects().length);
    if (cells.some((td) => td.classList.contains('blank'))) problems.push(`row ${i}: an empty answer is shown`);
    const boxes = [];
    for (const td of cells) {
      const box = td.getBoundingClientRect();
      const v = td.querySelector('.v');
      if (v) {
        const value = v.getBoundingClientRect();
        // The label is the cell's part left of its value.
        const label = { left: box.left, right: value.left, top: box.top, bottom: box.bottom };
        if (value.left - box.left < 80) problems.push(`row ${i}: the value of ${td.dataset.label} starts ${value.left - box.left}px into its cell`);
        boxes.push({ what: `${td.dataset.label} label`, r: label }, { what: `${td.dataset.label} value`, r: value });
      } else {
        boxes.push({ what: td.dataset.label, r: box });
      }
    }
    for (let a = 0; a < boxes.length; a++) {
      for (let b = a + 1; b < boxes.length; b++) {
        if (overlap(boxes[a].r, boxes[b].r)) problems.push(`row ${i}: ${boxes[a].what} overlaps ${boxes[b].what}`);
      }
    }
  }
  if (!rows.length) problems.push('no rows');
  return problems;
}

async function headers(page) {
  return (await page.locator('table.responses thead th').allInnerTexts()).map((h) => h.trim().toLowerCase());
}

async function main({ browser, page, watch }) {
  await setUp(page, setupURL);
  const key = await createKey(page, baseURL, 'Table test', 'read-write');

  const created = await api('POST', '/v1/forms', key, {
    name: 'Speaker applications',
    fields: [
      { label: 'Full name', type: 'text' },
      { label: 'Email address', type: 'email' },
      { label: 'Short biography', type: 'textarea' },
      { label: 'Preferred language', type: 'radio', options: ['Go', 'Pascal', 'Haskell', 'ALGOL 60'] },
      { label: 'Topics of interest', type: 'checkbox', options: ['Compilers', 'Distributed systems', 'Formal methods', 'Databases'] },
      { label: 'Years of experience', type: 'number' },
      { label: 'Available from', type: 'date' },
      { label: 'Country of residence', type: 'dropdown', options: ['Netherlands', 'United Kingdom', 'United States', 'Switzerland'] },
      { label: 'Company or organisation', type: 'text' },
      { label: 'Personal website', type: 'text' },
      { label: 'Dietary requirements', type: 'text' },
      { label: 'Anything else we should know', type: 'textarea' },
    ],
  });
  if (created.status !== 201) fail(`POST /v1/forms: ${created.status} ${created.text}`);
  const form = created.json;
  const f = form.fields.map((x) => x.id);
  const total = 500;
  const answers = (i) => {
    const d = {
      [f[0]]: names[i % names.length], [f[1]]: `user${i}@example.com`, [f[3]]: ['Go', 'Pascal', 'Haskell', 'ALGOL 60'][i % 4],
      [f[4]]: i % 3 ? ['Compilers', 'Formal methods'] : ['Distributed systems'], [f[5]]: 5 + (i % 40),
      [f[6]]: `2026-0${1 + (i % 9)}-1${i % 10}`, [f[7]]: ['Netherlands', 'United Kingdom', 'United States', 'Switzerland'][i % 4],
      [f[8]]: i % 2 ? 'Mathematisch Centrum Amsterdam' : 'Burroughs Corporation', [f[9]]: `https://www.example.org/people/${names[i % names.length].split(' ')[0].toLowerCase()}/`,
    };
    if (i % 5 === 0) d[f[2]] = paragraph;
    if (i % 7 === 0) d[f[10]] = 'Vegetarian';
    if (i % 4 === 0) d[f[11]] = 'Happy to chair a session.';
    return d;
  };
  const started = Date.now();
  for (let from = 0; from < total; from += 25) {
    const batch = [];
    for (let i = from; i < Math.min(total, from + 25); i++) batch.push(api('POST', `/v1/forms/${form.id}/submissions`, key, { data: answers(i) }));
    for (const r of await Promise.all(batch)) if (r.status !== 201) fail(`POST submission: ${r.status} ${r.text}`);
  }
  ok(`${total} responses created through the API in ${Date.now() - started} ms`);

  // One response from the public form page.
  const published = await api('PATCH', `/v1/forms/${form.id}`, key, { status: 'published' });
  if (published.status !== 200) fail(`publishing: ${published.status} ${published.text}`);
  const rctx = await browser.newContext({ viewport: phone390 });
  const rp = await rctx.newPage();
  rp.setDefaultTimeout(20000);
  watch(rp);
  await rp.goto(`${baseURL}/f/${form.id}`);
  await rp.getByLabel('Full name').fill('Walk-in Visitor');
  await rp.getByLabel('Email address').fill('walk-in@example.com');
  const sent = await submit(rp, () => rp.getByRole('button', { name: 'Submit' }).click());
  if (!sent || sent.status() >= 400) fail(`the public form answered ${sent && sent.status()}`);
  await rctx.close();
  ok('one response sent from the public form page');

  // The table at 1280 px.
  const tableURL = `${baseURL}/app/forms/${form.id}/responses`;
  await page.goto(tableURL);
  const rows = page.locator('table.responses tbody tr');
  if ((await rows.count()) !== 25) fail(`the first page has ${await rows.count()} rows`);
  const broken = await page.evaluate(wordsBrokenAcrossLines);
  if (broken.length) fail(`words broken mid-word at 1280 px: ${broken.slice(0, 12).join(' | ')}`);
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (sideways > 1) {
    const wide = await page.evaluate(() => Array.from(document.querySelectorAll('body *')).filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      .slice(0, 6).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`));
    fail(`at 1280 px the page scrolls sideways by ${sideways} px: ${wide.join(', ')}`);
  }
  ok('at 1280 px no word of any cell is broken across lines and the page does not scroll sideways');

  // Sticky header row and first column while the table scrolls inside its card.
  const stuck = await page.evaluate(() => {
    const wrap = document.querySelector('.responses-wrap');
    const first = document.querySelector('table.responses tbody tr td.col-first');
    const head = document.querySelector('table.responses thead th:nth-child(3)');
    const before = { first: first.getBoundingClientRect().left, head: head.getBoundingClientRect().top };
    const canScroll = { x: wrap.scrollWidth > wrap.clientWidth, y: wrap.scrollHeight > wrap.clientHeight };
    wrap.scrollLeft = 400;
    wrap.scrollTop = 300;
    const after = { first: first.getBoundingClientRect().left, head: head.getBoundingClientRect().top, wrapTop: wrap.getBoundingClientRect().top };
    wrap.scrollLeft = 0;
    wrap.scrollTop = 0;
    return { before, after, canScroll };
  });
  if (!stuck.canScroll.x || !stuck.canScroll.y) fail(`the table does not scroll inside its card: ${JSON.stringify(stuck.canScroll)}`);
  if (Math.abs(stuck.after.first - stuck.before.first) > 1) fail(`the first column moved from ${stuck.before.first} to ${stuck.after.first}`);
  if (Math.abs(stuck.after.head - stuck.after.wrapTop) > 1) fail(`the header row did not stay at the top of the table: ${JSON.stringify(stuck)}`);
  ok('the header row and the Received column stay in place while the table scrolls in its card');

  // A long answer is shortened, and opens.
  const long = page.locator('table.responses details.long').first();
  if ((await long.innerText()).length > 120) fail('a long answer is shown in full');
  await long.locator('summary').click();
  if (!(await long.innerText()).includes('passed around the world by mail')) fail('Show all does not show the whole answer');
  await long.locator('summary').click();
  ok('a 300-character answer shows its beginning and opens with Show all');

  // Select every row of the page at once; then none again.
  await page.getByLabel('Select every response on this page').check();
  if ((await page.locator('table.responses tbody input[name=id]:checked').count()) !== 25) fail('select all did not tick the 25 rows');
  if (!(await page.locator('[data-selected-count]').innerText()).includes('25 selected')) fail('no count of the selected rows');
  await page.getByLabel('Select every response on this page').uncheck();
  if ((await page.locator('table.responses tbody input[name=id]:checked').count()) !== 0) fail('unticking select all left rows ticked');
  ok('"select all" ticks and unticks every row of the page');
  await check(page, 'table');
  await checkDark(page, 'table');

  // Phone width: cards, labels and values apart, empty answers left out.
  await page.setViewportSize(phone390);
  const problems = await page.evaluate(cardOverlaps);
  if (problems.length) fail(`cards at 390 px: ${problems.slice(0, 8).join('; ')}`);
  const phoneSideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (phoneSideways > 1) fail(`at 390 px the page scrolls sideways by ${phoneSideways} px`);
  await axe(page, 'the table (390 px)');
  await page.screenshot({ path: path.resolve(artifactDir, 'responses-table-cards-390.png'), fullPage: false });
  await page.setViewportSize({ width: 1280, height: 900 });
  ok('at 390 px each response is a card with no overlapping label or value and no empty answers; axe-core 0 violations');

  // Columns: hide "Dietary requirements", swap "Email address" and "Full name", save, reload.
  await page.locator('#columns summary').click();
  await page.getByLabel('Dietary requirements').uncheck();
  await page.getByRole('button', { name: 'Move Email address up' }).click();
  if (!(await page.locator('[data-columns-status]').innerText()).includes('moved up')) fail('moving a column says nothing');
  await axe(page, 'the open Columns panel');
  await page.locator('#columns').screenshot({ path: path.resolve(artifactDir, 'responses-table-columns.png') });
  // Saving redraws the table in place; the reload shows what was stored.
  await page.getByRole('button', { name: 'Save columns' }).click();
  await page.locator('[data-columns-status]', { hasText: 'Columns saved.' }).waitFor();
  let h = await headers(page);
  if (h.includes('dietary requirements') || h.indexOf('email address') !== 1) fail(`columns after saving, before a reload: ${h.join(', ')}`);
  await page.getByLabel('Select every response on this page').check();
  if ((await page.locator('[data-selected-count]').innerText()).trim() !== '25 selected') fail('select all is lost once the table is redrawn');
  await page.getByLabel('Select every response on this page').uncheck();
  await page.reload();
  h = await headers(page);
  if (h.includes('dietary requirements') || h.indexOf('email address') !== 1 || h.indexOf('full name') !== 2) fail(`columns after reload: ${h.join(', ')}`);
  ok(`the column choice stays after a reload: ${h.slice(0, 4).join(', ')}…`);

  // Filter by an answer, then by the source; the columns stay.
  await page.getByLabel('Field').selectOption({ label: 'Full name' });
  await page.getByLabel('Answer contains').fill('liskov');
  await submit(page, () => page.getByLabel('Answer contains').press('Enter'));
  const liskov = await rows.count();
  for (let i = 0; i < liskov; i++) if (!(await rows.nth(i).innerText()).includes('Barbara Jane Liskov')) fail('a row that is not Liskov');
  if (liskov !== 25) fail(`the Liskov filter shows ${liskov} rows, want a full page`);
  h = await headers(page);
  if (h.includes('dietary requirements') || h.indexOf('email address') !== 1) fail('filtering forgot the columns');
  ok('the answer filter keeps only Liskov and keeps the columns');
  await page.getByLabel('Answer contains').fill('');
  await page.getByLabel('Source').selectOption({ label: 'Form page' });
  await submit(page, page.getByRole('button', { name: 'Apply' }));
  if ((await rows.count()) !== 1 || !(await rows.first().innerText()).includes('Walk-in Visitor')) fail('the source filter does not find the form page response');
  await page.getByLabel('Source').selectOption({ label: 'API' });
  await submit(page, page.getByRole('button', { name: 'Apply' }));
  if ((await rows.count()) !== 25 || (await page.locator('main').innerText()).includes('Walk-in Visitor')) fail('the API source shows the form page response');
  ok('the source filter tells the form page response from the API ones');

  // A response, then Next: the next row of the table.
  const second = await rows.nth(1).locator('td.col-first a').getAttribute('href');
  await submit(page, rows.first().locator('td.col-first a'));
  await check(page, 'detail');
  await page.setViewportSize(phone390);
  await axe(page, 'the detail (390 px)');
  await page.setViewportSize({ width: 1280, height: 900 });
  await submit(page, page.getByRole('link', { name: /Next/ }));
  if (new URL(page.url()).pathname + new URL(page.url()).search !== second) fail(`Next went to ${page.url()}, want ${second}`);
  await submit(page, page.getByRole('link', { name: 'Back to responses' }));
  if (!page.url().includes('source=api')) fail(`Back forgot the filter: ${page.url()}`);
  ok('Next on a response opens the next row, and Back returns to the filtered table');
  ok(`screenshots: ${shots.length + 1} files in ${artifactDir}`);
}

run(() => inBrowser(main));
