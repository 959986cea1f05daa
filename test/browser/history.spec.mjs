// Browser test of a form's history, run by TestHistoryBrowser (test/dashboard_browser_test.go):
//
//   node test/browser/history.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner signs up from the logged link, creates an API key and a form through the API,
// sends one submission, then changes the form twice through the API (the history names the key) (a label; an option and a
// rule) and sends another. In the dashboard, from the keyboard: the builder links the history;
// the history lists three versions with who and what changed; "Compare with version 1" shows the
// label and the options before and after; the table marks the early response and the question as
// it was asked; its detail stands under version 1's labels; Restore version 1 asks first, and
// makes version 4 with the first labels. axe-core at desktop width, 375 px and in dark mode on
// every page: zero violations. Screenshots: <artifact dir>/history-<page>.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import { api as callAPI, args, checker, createKey, fail, inBrowser, ok, run, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('history.spec.mjs');
const { check, checkDark } = checker(artifactDir, 'history');
const api = (method, url, key, body) => callAPI(baseURL, method, url, key, body);

async function main({ page }) {
  await setUp(page, setupURL);
  const key = await createKey(page, baseURL, 'History test', 'read-write');

  const created = await api('POST', '/v1/forms', key, {
    name: 'Event sign-up',
    fields: [
      { key: 'name', label: 'Name', type: 'text', required: true },
      { key: 'meal', label: 'Meal', type: 'radio', options: ['Meat', 'Fish', 'Vegetarian'] },
      { key: 'allergies', label: 'Allergies', type: 'text' },
    ],
  });
  if (created.status !== 201) fail(`POST /v1/forms: ${created.status} ${created.text}`);
  const form = created.json;
  const [fName, fMeal, fAllergies] = form.fields;
  const early = await api('POST', `/v1/forms/${form.id}/submissions`, key, { data: { [fName.id]: 'Grace', [fMeal.id]: 'Fish' } });
  if (early.status !== 201) fail(`first submission: ${early.status} ${early.text}`);

  const relabel = await api('PATCH', `/v1/forms/${form.id}`, key, {
    fields: [{ ...fName, label: 'Your full name' }, fMeal, fAllergies],
  });
  if (relabel.status !== 200 || relabel.json.version !== 2) fail(`relabel: ${relabel.status} ${relabel.text}`);
  const options = await api('PATCH', `/v1/forms/${form.id}`, key, {
    fields: [{ ...fName, label: 'Your full name' }, { ...fMeal, options: ['Meat', 'Fish', 'Vegan'] },
      { ...fAllergies, show_if: { match: 'all', conditions: [{ field_id: fMeal.id, operator: 'equals', value: 'Vegan' }] } }],
  });
  if (options.status !== 200 || options.json.version !== 3) fail(`options: ${options.status} ${options.text}`);
  const late = await api('POST', `/v1/forms/${form.id}/submissions`, key, { data: { [fName.id]: 'Alan', [fMeal.id]: 'Vegan' } });
  if (late.status !== 201) fail(`second submission: ${late.status} ${late.text}`);
  ok('a form with three versions and a response to the first and the third');

  // The builder links the history.
  await page.goto(`${baseURL}/app/forms/${form.id}`);
  await submit(page, page.getByRole('link', { name: 'History' }).first());
  if (!page.url().endsWith(`/app/forms/${form.id}/history`)) fail(`the History link went to ${page.url()}`);
  const versions = await page.locator('li.version h3').allInnerTexts();
  if (versions.length !== 3 || !versions[0].startsWith('Version 3') || !versions[0].includes('Current')) fail(`versions: ${JSON.stringify(versions)}`);
  const v3 = await page.locator('#v3').innerText();
  for (const want of ['API key “History test”', 'Changed “Meal”: options (1 added, 1 removed)', 'Changed “Allergies”: logic']) {
    if (!v3.includes(want)) fail(`version 3 lacks ${want}: ${v3}`);
  }
  if (!(await page.locator('#v2').innerText()).includes('Relabelled “Name” to “Your full name”')) fail('version 2 does not say Name was relabelled');
  await check(page, 'list');
  await checkDark(page, 'list');
  ok('the history lists three versions with who made them and what changed');

  // Compare 1 and 3 from the form, by keyboard.
  await page.getByLabel('From version').selectOption('1');
  await page.getByLabel('To version').selectOption('3');
  await page.getByRole('button', { name: 'Compare' }).focus();
  await submit(page, () => page.keyboard.press('Enter'));
  const cmp = await page.locator('main').innerText();
  for (const want of ['Version 1 and version 3', 'Your full name', 'Meat, Fish, Vegetarian', 'Meat, Fish, Vegan', 'Shown when Meal is Vegan', 'Always shown']) {
    if (!cmp.includes(want)) fail(`the comparison lacks ${want}: ${cmp}`);
  }
  await check(page, 'compare');
  await checkDark(page, 'compare');
  ok('the comparison of versions 1 and 3 shows the label, the options and the rule before and after');

  // Responses under the labels they answered.
  await page.goto(`${baseURL}/app/forms/${form.id}/responses`);
  const table = await page.locator('table.responses').innerText();
  if (!table.includes('v1') || !table.includes('asked as “Name”')) fail(`the table does not mark the early response: ${table}`);
  await page.goto(`${baseURL}/app/forms/${form.id}/responses/${early.json.id}`);
  const detail = await page.locator('main').innerText();
  if (!detail.includes('answered version 1 of the form') || !/\nName\n/.test(detail) || detail.includes('Your full name')) fail(`the early response's detail: ${detail}`);
  await check(page, 'response');
  ok('the early response stands under version 1\'s labels, in the table and its detail');

  // Restore version 1: asked first, then version 4.
  await page.goto(`${baseURL}/app/forms/${form.id}/history`);
  await submit(page, page.getByRole('link', { name: 'Restore version 1' }));
  const confirm = await page.locator('main').innerText();
  if (!confirm.includes('new version 4')) fail(`the confirmation: ${confirm}`);
  await check(page, 'restore');
  await submit(page, page.getByRole('button', { name: 'Restore version 1' }));
  if (!(await page.getByText('Version 1 restored as version 4.').isVisible())) fail('no notice after the restore');
  const now = await api('GET', `/v1/forms/${form.id}`, key);
  if (now.json.version !== 4 || now.json.fields[0].label !== 'Name' || now.json.fields[1].options.join() !== 'Meat,Fish,Vegetarian' || now.json.fields[0].id !== fName.id) {
    fail(`after the restore: ${now.text}`);
  }
  await page.reload();
  if ((await page.locator('li.version').count()) !== 4) fail('the reloaded history does not list four versions');
  ok('Restore version 1 asked first, then made version 4 with the first questions, field IDs kept');
}

run(() => inBrowser(main));
