// Browser test of the form builder, run by test/dashboard_browser_test.go
// (TestFormsBuilderBrowser):
//
//   node test/browser/forms_builder.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner creates a form in the dashboard and builds it with all nine field types:
// options through the list editor, a file field's accepted types and size; one field moved by
// dragging its handle with the mouse, another with the keyboard (Move up/Move down); settings
// saved; the form published. The share link is opened in a second browser context, where a
// respondent fills every field, attaches a file and submits; the dashboard then counts the
// response. axe-core runs on every page at desktop width and at 375 px (zero violations, no
// sideways scrolling); screenshots: <artifact dir>/forms-builder-<page>[-375].png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import path from 'node:path';
import { args, axe, checker, desktop, fail, inBrowser, ok, phone, run, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('forms_builder.spec.mjs');
const { check, checkDark, shots } = checker(artifactDir, 'forms-builder', { iframes: false });

async function order(page) {
  return page.locator('#fb-fields > li').evaluateAll((els) => els.map((el) => el.querySelector('.fb-field-title strong').textContent.trim()));
}

const types = [
  ['text', 'Full name'], ['textarea', 'About you'], ['email', 'Email address'], ['number', 'Guests'], ['date', 'Arrival'],
  ['dropdown', 'Ticket'], ['radio', 'Meal'], ['checkbox', 'Topics'], ['file', 'Your CV'],
];

async function main({ browser, page, watch }) {
  await setUp(page, setupURL);
  await check(page, 'list-empty');

  // Create the form: an empty draft, then the builder.
  await page.getByLabel('Form name').fill('Conference registration');
  await submit(page, () => page.getByRole('button', { name: 'Create form' }).click());
  if (!/\/app\/forms\/frm_/.test(page.url())) fail(`after creating: ${page.url()}`);
  const formURL = page.url().split('?')[0].split('#')[0];
  ok('created a draft form and opened the builder');

  // A label left empty: the domain's error next to the label input.
  await page.locator('#add-type').selectOption('text');
  let resp = await submit(page, () => page.getByRole('button', { name: 'Add field' }).click());
  if (resp.status() !== 422) fail(`adding a field without a label: ${resp.status()}`);
  const labelError = (await page.locator('#add-label-error').innerText()).trim();
  if (!labelError) fail('no error next to the label of the new field');
  if ((await page.locator('#add-label').getAttribute('aria-invalid')) !== 'true') fail('the label input is not marked invalid');
  await check(page, 'validation-error');
  ok(`validation error shown next to the control: "${labelError}"`);

  for (const [type, label] of types) {
    await page.locator('#add-type').selectOption(type);
    await page.locator('#add-label').fill(label);
    await submit(page, () => page.getByRole('button', { name: 'Add field' }).click());
  }
  let got = await order(page);
  if (got.join('|') !== types.map((t) => t[1]).join('|')) fail(`fields after adding: ${got}`);
  ok('added all nine field types');

  // Options of the checkbox field through the list editor (added, one removed).
  const topics = page.locator('#fb-fields > li', { hasText: 'Topics' });
  await topics.locator('summary').click();
  for (const v of ['Go', 'Rust', 'Cobol', 'Zig']) {
    await topics.getByRole('button', { name: 'Add option' }).click();
    await topics.locator('.fb-opt-list li input').last().fill(v);
  }
  await topics.getByRole('button', { name: 'Remove: options 3' }).click();
  await topics.getByLabel('Required').check();
  await check(page, 'options-editor');
  await submit(page, () => topics.getByRole('button', { name: /^Save field/ }).click());
  const opts = await page.locator('#fb-fields > li', { hasText: 'Topics' }).locator('textarea[name=options]').inputValue();
  if (opts !== 'Go\nRust\nZig') fail(`checkbox options saved as ${JSON.stringify(opts)}`);
  ok('options edited with the list editor: Go, Rust, Zig');

  // The file field: accepted types and size.
  const cv = page.locator('#fb-fields > li', { hasText: 'Your CV' });
  await cv.locator('summary').click();
  await cv.getByLabel('Accepted types').fill('text/plain, application/pdf');
  await cv.getByLabel('Largest file (MB)').fill('1');
  await submit(page, () => cv.getByRole('button', { name: /^Save field/ }).click());
  ok('file field limited to text/plain and PDF, 1 MB');

  // Mouse: drag "Your CV" by its handle above "Full name", in a window as tall as the page,
  // so both are in view (Playwright's synthetic drag does not survive a scroll between the two).
  const tall = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: desktop.width, height: Math.min(tall + 100, 12000) });
  await page.evaluate(() => window.scrollTo(0, 0));
  const handle = page.locator('#fb-fields > li', { hasText: 'Your CV' }).locator('.fb-handle');
  const first = page.locator('#fb-fields > li').first();
  await Promise.all([page.waitForNavigation(), handle.dragTo(first, { targetPosition: { x: 40, y: 4 } })]);
  await page.setViewportSize(desktop);
  got = await order(page);
  if (got[0] !== 'Your CV' || got[1] !== 'Full name') fail(`after dragging: ${got}`);
  ok(`dragged with the mouse: ${got.join(', ')}`);

  // Keyboard: focus "Move down: Your CV" and press Enter, then Space on "Move up: About you".
  await page.locator('#fb-fields > li', { hasText: 'Your CV' }).getByRole('button', { name: /^Move down/ }).focus();
  await submit(page, () => page.keyboard.press('Enter'));
  got = await order(page);
  if (got[0] !== 'Full name' || got[1] !== 'Your CV') fail(`after Move down: ${got}`);
  await page.locator('#fb-fields > li', { hasText: 'About you' }).getByRole('button', { name: /^Move up/ }).focus();
  await submit(page, () => page.keyboard.press('Space'));
  got = await order(page);
  if (got.slice(0, 3).join('|') !== 'Full name|About you|Your CV') fail(`after Move up: ${got}`);
  ok(`moved with the keyboard: ${got.join(', ')}`);

  // Settings: a thank-you message; no minimum fill time so the test need not wait.
  await page.getByLabel('Thank-you message').fill('Thanks, see you at the conference!');
  await page.getByLabel('Minimum fill time (seconds)').fill('0');
  await submit(page, () => page.getByRole('button', { name: 'Save settings' }).click());
  ok('settings saved');

  // The preview is the public page's own template.
  const preview = page.frameLocator('iframe.fb-preview');
  await preview.locator('#fw-form').waitFor();
  const previewText = await preview.locator('body').innerText();
  if (!previewText.includes('Conference registration') || !previewText.includes('Your CV')) fail(`preview shows: ${previewText.slice(0, 200)}`);
  ok('the live preview shows the form');

  await submit(page, () => page.getByRole('button', { name: 'Publish' }).click());
  if (!(await page.locator('.page-head .badge').innerText()).includes('published')) fail('not published');
  await check(page, 'builder');
  const shareLink = (await page.locator('#share-link').innerText()).trim();
  if (!shareLink.endsWith(formURL.split('/').pop())) fail(`share link ${shareLink}`);
  if ((await page.locator('#share img.qr').count()) !== 1) fail('no QR code in the share panel');
  if (!(await page.locator('#snip-iframe').innerText()).includes(`src="${shareLink}"`)) fail('the iframe snippet does not use the link');
  ok(`published; share link ${shareLink}, QR code and embed snippets shown`);

  await page.goto(formURL + '/preview');
  await check(page, 'preview');
  await page.goto(baseURL + '/app/forms');
  await check(page, 'list');
  const filters = page.getByRole('navigation', { name: 'Show forms by status' });
  await filters.getByRole('link', { name: 'Drafts' }).click();
  if ((await page.locator('tbody tr', { hasText: 'Conference registration' }).count()) !== 0) fail('the published form is listed among the drafts');
  await filters.getByRole('link', { name: 'Published' }).click();
  if ((await page.locator('tbody tr', { hasText: 'Conference registration' }).count()) !== 1) fail('the published form is not listed as published');
  if ((await filters.locator('[aria-current="page"]').innerText()).trim() !== 'Published') fail('the current status filter is not marked');
  await check(page, 'list-published');
  await checkDark(page, 'list-published');
  ok('the status filters list the drafts and the published forms apart');

  // A respondent in a second context opens the share link and submits, with a file.
  const other = await browser.newContext({ viewport: phone });
  const rp = await other.newPage();
  rp.setDefaultTimeout(20000);
  watch(rp);
  resp = await rp.goto(shareLink);
  if (resp.status() !== 200) fail(`share link: ${resp.status()}`);
  await axe(rp, 'the public form');
  await rp.screenshot({ path: path.resolve(artifactDir, 'forms-builder-public.png'), fullPage: true });
  await rp.getByLabel('Full name').fill('Grace Hopper');
  await rp.getByLabel('About you').fill('Compilers.');
  await rp.getByLabel('Email address').fill('grace@example.org');
  await rp.getByLabel('Guests').fill('2');
  await rp.getByLabel('Arrival').fill('2026-05-01');
  await rp.getByLabel('Ticket').selectOption('Option 2');
  await rp.getByRole('radio', { name: 'Option 1' }).check();
  await rp.getByRole('checkbox', { name: 'Rust' }).check();
  await rp.getByLabel('Your CV').setInputFiles({ name: 'cv.txt', mimeType: 'text/plain', buffer: Buffer.from('Grace Hopper, rear admiral\n') });
  await submit(rp, () => rp.getByRole('button', { name: 'Submit' }).click());
  const thanks = await rp.locator('body').innerText();
  if (!thanks.includes('Thanks, see you at the conference!')) fail(`after submitting: ${thanks.slice(0, 300)}`);
  await axe(rp, 'the thank-you page');
  await rp.screenshot({ path: path.resolve(artifactDir, 'forms-builder-thanks.png'), fullPage: true });
  ok('the respondent submitted every field with a file and saw the thank-you message');

  await page.goto(baseURL + '/app/forms');
  const row = await page.locator('tbody tr', { hasText: 'Conference registration' }).innerText();
  if (!/published/.test(row) || !/\b1\b/.test(row)) fail(`the list after one response: ${row}`);
  ok('the forms list counts the response');

  // Removing a field that has an answer asks first and says how many; the answer stays in the
  // responses table as a removed column.
  await page.goto(formURL);
  await page.locator('#fb-fields > li', { hasText: 'About you' }).getByRole('link', { name: /^Remove/ }).click();
  await page.waitForURL('**/remove');
  const removeText = await page.locator('main').innerText();
  if (!removeText.includes('“About you” has 1 answer.') || !removeText.includes('“About you (removed)” column')) fail(`remove confirmation: ${removeText.slice(0, 400)}`);
  await check(page, 'remove-field-confirm');
  await checkDark(page, 'remove-field-confirm');
  await submit(page, () => page.getByRole('button', { name: 'Remove field' }).click());
  if ((await order(page)).includes('About you')) fail('the field is still on the form after confirming');
  await page.goto(formURL + '/responses');
  const removedHead = page.getByRole('columnheader', { name: 'About you (removed)' });
  if ((await removedHead.count()) !== 1) fail('the responses table has no "About you (removed)" column');
  if (!(await page.locator('tbody').innerText()).includes('Compilers.')) fail('the removed field\'s answer is not in the table');
  await check(page, 'responses-removed');
  await checkDark(page, 'responses-removed');
  ok('removing a field with an answer asks first; the answer stays as a removed column');

  // Archiving the live form asks first and says the link stops taking responses.
  await page.goto(formURL);
  await page.getByRole('link', { name: 'Archive' }).click();
  const confirmText = await page.locator('main').innerText();
  if (!confirmText.includes('stops taking responses') || !confirmText.includes('Its 1 response and their files stay.')) fail(`archive confirmation: ${confirmText.slice(0, 400)}`);
  await check(page, 'archive-confirm');
  await checkDark(page, 'archive-confirm');
  await submit(page, () => page.getByRole('button', { name: 'Archive form' }).click());
  if (!(await page.locator('.page-head .badge').innerText()).includes('archived')) fail('the form is not archived after confirming');
  ok('archiving a live form asks first, then archives it');
}

run(() => inBrowser(main));
