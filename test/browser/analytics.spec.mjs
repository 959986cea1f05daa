// Browser test of a form's analytics, run by TestAnalyticsBrowser (test/dashboard_browser_test.go):
//
//   node test/browser/analytics.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner signs up from the logged link, creates an API key and a two-page form through
// the API, and sends five submissions through the API with known answers. Then respondents use
// the public page: one with JavaScript fills both pages and submits, one with JavaScript starts
// and leaves on the first page, one without JavaScript fills both pages and submits, and one
// only looks at the page. The analytics page must add it all up: views, starts, submissions from
// the form and through the API, the completion rate, every option's count and share, the number
// field's min/median/max, how many answered each question and how many reached each page; the
// API's GET /v1/forms/{id}/stats says the same. axe-core runs at desktop width and at 375 px
// with the tables open: zero violations. Screenshots: <artifact dir>/analytics-<page>.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import { api as callAPI, args, checker, createKey, desktop, expectNoAxeViolations, fail, inBrowser, ok, run, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('analytics.spec.mjs');
const { check, checkDark } = checker(artifactDir, 'analytics');
const api = (method, url, key, body) => callAPI(baseURL, method, url, key, body);

// An option whose label is too long for one line of a chart: it is cut there, whole in the table.
const longOption = 'Oat milk, warmed and frothed to a velvety microfoam with a dusting of cinnamon on top';

// overlaps lists the chart rows whose label runs into their count, or whose text leaves the chart.
function overlaps(page) {
  return page.locator('svg.hbars g.hrow').evaluateAll((gs) => gs.flatMap((g) => {
    const svg = g.ownerSVGElement.getBoundingClientRect();
    const label = [...g.querySelectorAll('.hlabel')].find((t) => getComputedStyle(t).display !== 'none').getBoundingClientRect();
    const count = g.querySelector('.hcount').getBoundingClientRect();
    const bad = label.right > count.left - 4 || label.left < svg.left || count.right > svg.right + 0.5;
    return bad ? [`${g.getAttribute('data-option') || g.getAttribute('data-page') || g.getAttribute('data-step')}: label ${label.left}-${label.right}, count ${count.left}-${count.right}, chart ${svg.left}-${svg.right}`] : [];
  }));
}

async function main({ browser, page, watch }) {
  await setUp(page, setupURL);

  const key = await createKey(page, baseURL, 'Analytics test', 'read-write');

  const created = await api('POST', '/v1/forms', key, {
    name: 'Coffee survey',
    fields: [
      { label: 'Colour', type: 'radio', options: ['Red', 'Green', 'Blue'], required: true, page: 1 },
      { label: 'Extras', type: 'checkbox', options: ['Milk', 'Sugar', longOption], page: 1 },
      { label: 'Age', type: 'number', page: 2 },
      { label: 'Comment', type: 'text', page: 2 },
    ],
    settings: { spam: { min_fill_seconds: 0, proof_of_work: false } },
  });
  if (created.status !== 201) fail(`POST /v1/forms: ${created.status} ${created.text}`);
  const form = created.json;
  const [fColour, fExtras, fAge] = form.fields.map((f) => f.id);
  const published = await api('PATCH', `/v1/forms/${form.id}`, key, { status: 'published' });
  if (published.status !== 200) fail(`publishing: ${published.status} ${published.text}`);

  const throughAPI = [
    { [fColour]: 'Red', [fExtras]: ['Milk'], [fAge]: 30 },
    { [fColour]: 'Green', [fExtras]: ['Milk', 'Sugar'], [fAge]: 40 },
    { [fColour]: 'Red', [fExtras]: [], [fAge]: 25 },
    { [fColour]: 'Blue', [fAge]: 50 },
    { [fColour]: 'Red', [fExtras]: ['Sugar'] },
  ];
  for (const data of throughAPI) {
    const r = await api('POST', `/v1/forms/${form.id}/submissions`, key, { data });
    if (r.status !== 201) fail(`POST submission: ${r.status} ${r.text}`);
  }
  ok(`${throughAPI.length} submissions through the API`);

  const publicURL = `${baseURL}/f/${form.id}`;
  // respondent opens the public page in a new context (JavaScript on or off) and runs act.
  const respondent = async (js, act) => {
    const ctx = await browser.newContext({ viewport: desktop, javaScriptEnabled: js });
    const rp = await ctx.newPage();
    rp.setDefaultTimeout(20000);
    watch(rp);
    const resp = await rp.goto(publicURL);
    if (resp.status() !== 200) fail(`public page: ${resp.status()}`);
    await act(rp);
    await ctx.close();
  };
  // started waits for the page's start beacon to be answered.
  const started = (rp) => rp.waitForResponse((r) => r.url().endsWith(`/f/${form.id}/start`) && r.request().method() === 'POST');
  const fill = async (rp, js, { colour, extras, age }) => {
    const beacon = js ? started(rp) : null;
    await rp.getByRole('radio', { name: colour }).check();
    if (beacon && (await beacon).status() !== 204) fail('the start beacon was not counted');
    for (const e of extras) await rp.getByRole('checkbox', { name: e, exact: true }).check();
    await submit(rp, () => rp.getByRole('button', { name: 'Next' }).click());
    await rp.getByLabel('Age').fill(String(age));
    await rp.getByLabel('Comment').fill(js ? 'with JavaScript' : 'without JavaScript');
    await submit(rp, () => rp.getByRole('button', { name: 'Submit' }).click());
    const body = await rp.locator('body').innerText();
    if (!/thank/i.test(body)) fail(`after submitting (JavaScript ${js ? 'on' : 'off'}): ${body.slice(0, 300)}`);
  };

  await respondent(true, (rp) => fill(rp, true, { colour: 'Green', extras: ['Milk'], age: 35 }));
  ok('a respondent with JavaScript filled both pages and submitted');
  await respondent(true, async (rp) => {
    const beacon = started(rp);
    await rp.getByRole('radio', { name: 'Red' }).check();
    if ((await beacon).status() !== 204) fail('the start beacon was not counted');
  });
  ok('a respondent with JavaScript started and left on the first page');
  await respondent(false, (rp) => fill(rp, false, { colour: 'Blue', extras: ['Sugar'], age: 60 }));
  ok('a respondent without JavaScript filled both pages and submitted');
  await respondent(false, async () => {});
  ok('a visitor only looked at the page');

  // What it must add up to.
  const want = {
    views: 4, starts: 3, form: 2, api: 5, submissions: 7, completion: '66.7%',
    options: {
      Colour: { answered: 7, counts: { Red: 3, Green: 2, Blue: 2 } },
      Extras: { answered: 5, counts: { Milk: 3, Sugar: 3, [longOption]: 0 } },
    },
    answered: { Age: 6, Comment: 2 },
    // 25, 30, 35, 40, 50, 60
    age: { min: '25', median: '37.5', max: '60' },
    // Three visits started on page 1; the two that submitted went through page 2.
    pages: { 'Page 1': 3, 'Page 2': 2 },
  };

  await page.goto(`${baseURL}/app/forms/${form.id}/analytics`);
  const stat = async (label) => (await page.locator('.stat', { has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
    .first().locator('.stat-value').innerText()).trim();
  const got = {
    views: await stat('Views'), starts: await stat('Starts'), submissions: await stat('Submissions'),
    form: (await page.locator('[data-stat="form-submissions"]').innerText()).trim(),
    api: (await page.locator('[data-stat="api-submissions"]').innerText()).trim(),
    completion: await stat('Completion rate'),
  };
  for (const k of ['views', 'starts', 'submissions', 'form', 'api', 'completion']) {
    if (got[k] !== String(want[k])) fail(`${k}: the page says ${got[k]}, want ${want[k]} (all: ${JSON.stringify(got)})`);
  }
  if (Number(got.form) + Number(got.api) !== Number(got.submissions)) fail('form and API submissions do not add up');
  ok(`totals add up: ${JSON.stringify(got)}`);

  // From view to submission: each step's share of the views.
  const funnel = await page.locator('svg g.hrow[data-step]').evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-count')} ${g.querySelector('.hcount').textContent}`));
  if (funnel.join(' | ') !== '4 4 · 100% | 3 3 · 75% | 2 2 · 50%') fail(`funnel: ${funnel.join(' | ')}`);

  // Today's row of the daily table.
  const today = new Date().toISOString().slice(0, 10);
  const day = (await page.locator(`.chart-table tr:has(time[datetime="${today}"]) td`).allTextContents()).map((s) => s.trim());
  if (day.join(',') !== `${want.views},${want.starts},${want.submissions}`) fail(`today's row: ${day.join(',')}`);

  const question = (label) => page.locator(`section.question[data-question="${label}"]`);
  for (const [label, { answered, counts }] of Object.entries(want.options)) {
    const q = question(label);
    const a = (await q.locator('[data-stat="answered"]').innerText()).trim();
    if (a !== String(answered)) fail(`${label}: ${a} answered, want ${answered}`);
    const rows = await q.locator('svg g.hrow').evaluateAll((gs) => gs.map((g) => [g.getAttribute('data-option'), Number(g.getAttribute('data-count')), g.querySelector('.hcount').textContent]));
    const seen = Object.fromEntries(rows.map(([o, n]) => [o, n]));
    if (JSON.stringify(seen) !== JSON.stringify(counts)) fail(`${label}: bars ${JSON.stringify(seen)}, want ${JSON.stringify(counts)}`);
    for (const [o, n, text] of rows) {
      const share = `${Math.round((n / answered) * 1000) / 10}%`;
      if (text.trim() !== `${n} · ${share}`) fail(`${label} ${o}: the bar says ${text}, want ${n} · ${share}`);
    }
    // The table alternative says the same.
    const cells = await q.locator('.chart-table tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelector('th').textContent, tr.querySelectorAll('td')[0].textContent]));
    if (JSON.stringify(Object.fromEntries(cells.map(([o, n]) => [o, Number(n)]))) !== JSON.stringify(counts)) fail(`${label}: table ${JSON.stringify(cells)}`);
  }
  for (const [label, n] of Object.entries(want.answered)) {
    const a = (await question(label).locator('[data-stat="answered"]').innerText()).trim();
    if (a !== String(n)) fail(`${label}: ${a} answered, want ${n}`);
  }
  const age = question('Age');
  for (const k of ['min', 'median', 'max']) {
    const v = (await age.locator(`[data-stat="${k}"]`).innerText()).trim();
    if (v !== want.age[k]) fail(`Age ${k}: ${v}, want ${want.age[k]}`);
  }
  ok('every option count, share, answered count and the number field\'s min/median/max add up');

  const pages = Object.fromEntries(await page.locator('svg g.hrow[data-page]').evaluateAll((gs) => gs.map((g) => [g.getAttribute('data-page'), Number(g.getAttribute('data-reached'))])));
  if (JSON.stringify(pages) !== JSON.stringify(want.pages)) fail(`pages reached: ${JSON.stringify(pages)}, want ${JSON.stringify(want.pages)}`);
  ok(`pages reached: ${JSON.stringify(pages)}`);

  // The API says the same.
  const stats = await api('GET', `/v1/forms/${form.id}/stats?days=30`, key);
  if (stats.status !== 200) fail(`GET stats: ${stats.status}`);
  const s = stats.json;
  if (s.views !== want.views || s.starts !== want.starts || s.submissions !== want.submissions ||
      s.submissions_by_source?.form !== want.form || s.submissions_by_source?.api !== want.api) {
    fail(`GET stats: ${stats.text}`);
  }
  const colour = (s.fields || []).find((f) => f.field_id === fColour);
  const colourCounts = Object.fromEntries((colour?.options || []).map((o) => [o.option, o.count]));
  if (colour?.answered !== 7 || JSON.stringify(colourCounts) !== JSON.stringify(want.options.Colour.counts)) fail(`GET stats fields: ${JSON.stringify(s.fields)}`);
  const ageStats = (s.fields || []).find((f) => f.field_id === fAge);
  if (ageStats?.min !== 25 || ageStats?.median !== 37.5 || ageStats?.max !== 60) fail(`GET stats age: ${JSON.stringify(ageStats)}`);
  if (JSON.stringify((s.pages || []).map((p) => [p.page, p.reached])) !== JSON.stringify([[1, 3], [2, 2]])) fail(`GET stats pages: ${JSON.stringify(s.pages)}`);
  ok('GET /v1/forms/{id}/stats says the same');

  // Every table open, checked by axe-core at desktop width and at 375 px, and in dark mode.
  for (const d of await page.locator('details.chart-table').all()) {
    await d.locator('summary').click();
  }
  await check(page, 'analytics');
  await checkDark(page, 'analytics');
  // No chart row's label runs into its count, on a wide screen, a tablet or a phone of 390 px,
  // where axe-core finds nothing either and the page does not scroll sideways.
  for (const width of [1280, 800, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const bad = await overlaps(page);
    if (bad.length) fail(`at ${width} px: ${bad.join('; ')}`);
  }
  await expectNoAxeViolations(page, 'analytics (390 px)');
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (sideways > 1) fail(`at 390 px the page scrolls sideways by ${sideways} px`);
  if (!(await page.locator('svg.hbars text.hlabel.short', { hasText: /…$/ }).first().isVisible())) fail('the long option is not cut at 390 px');
  if (!(await page.locator('.chart-table th', { hasText: longOption }).count())) fail('the table lacks the long option whole');
  await page.setViewportSize(desktop);
  ok('chart labels never run into their counts at 1280, 800 and 390 px; the long option is whole in its table');
  // Keyboard: the first table's summary takes focus and toggles.
  const first = page.locator('details.chart-table summary').first();
  await first.focus();
  await page.keyboard.press('Enter');
  if (await page.locator('details.chart-table').first().evaluate((d) => d.open)) fail('Enter on the summary did not close the table');
  ok('the tables open and close from the keyboard');
}

run(() => inBrowser(main));
