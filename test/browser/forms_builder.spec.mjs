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
// sideways scrolling); screenshots: <artifact dir>/forms-builder-<page>[-375].png. Then "New
// form" is checked (a blank form and five templates, also at 390 px and dark), a form made from
// the Event registration template, its preview stepped through (the display rule live, Submit
// answered by the preview's own thank-you) and switched to phone width without a reload.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import path from 'node:path';
import { args, axe, checker, desktop, expectNoAxeViolations, fail, inBrowser, ok, phone, run, save, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('forms_builder.spec.mjs');
const { check, checkDark, shots } = checker(artifactDir, 'forms-builder', { iframes: false });

async function order(page) {
  return page.locator('#fb-fields > li.fb-field').evaluateAll((els) => els.map((el) => el.querySelector('.fb-field-title strong').textContent.trim()));
}

// question finds a question of the builder by its label (other questions' logic pickers name
// it too, so a text match on the whole item would not do).
function question(page, label) {
  return page.locator('#fb-fields > li.fb-field').filter({ has: page.locator('.fb-field-title strong', { hasText: new RegExp(`^${label}$`) }) });
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

  // A label left empty: the domain's error next to the label input, without a page reload.
  await page.evaluate(() => { window.notReloaded = true; });
  await page.locator('#add-type').selectOption('text');
  let status = await save(page, () => page.locator('#add-submit').click());
  if (status !== 422) fail(`adding a question without a label: ${status}`);
  const labelError = (await page.locator('#add-label-error').innerText()).trim();
  if (!labelError) fail('no error next to the label of the new question');
  if ((await page.locator('#add-label').getAttribute('aria-invalid')) !== 'true') fail('the label input is not marked invalid');
  if (!(await page.evaluate(() => document.activeElement && document.activeElement.id === 'add-label'))) fail('focus is not on the label in error');
  await check(page, 'validation-error');
  ok(`validation error shown next to the control, focus on it: "${labelError}"`);

  for (const [type, label] of types) {
    await page.locator('#add-type').selectOption(type);
    await page.locator('#add-label').fill(label);
    await save(page, () => page.locator('#add-submit').click());
  }
  let got = await order(page);
  if (got.join('|') !== types.map((t) => t[1]).join('|')) fail(`questions after adding: ${got}`);
  if (!(await page.evaluate(() => window.notReloaded === true))) fail('adding questions reloaded the page');
  ok('added all nine field types without a page reload');

  // Options of the checkbox field through the list editor (added, one removed).
  const topics = question(page, 'Topics');
  await topics.locator('.fb-edit > summary').click();
  for (const v of ['Go', 'Rust', 'Cobol', 'Zig']) {
    await topics.getByRole('button', { name: 'Add option' }).click();
    await topics.locator('.fb-opt-list li input').last().fill(v);
  }
  await topics.getByRole('button', { name: 'Remove: options 3' }).click();
  await topics.getByLabel('Required').check();
  await check(page, 'options-editor');
  await save(page, () => topics.getByRole('button', { name: /^Save/ }).click());
  const opts = await question(page, 'Topics').locator('textarea[name=options]').inputValue();
  if (opts !== 'Go\nRust\nZig') fail(`checkbox options saved as ${JSON.stringify(opts)}`);
  ok('options edited with the list editor: Go, Rust, Zig');

  // The file field: accepted types and size.
  const cv = question(page, 'Your CV');
  await cv.locator('.fb-edit > summary').click();
  await cv.getByLabel('Accepted types').fill('text/plain, application/pdf');
  await cv.getByLabel('Largest file (MB)').fill('1');
  await save(page, () => cv.getByRole('button', { name: /^Save/ }).click());
  ok('file field limited to text/plain and PDF, 1 MB');

  // Mouse: drag "Your CV" by its handle above "Full name", in a window as tall as the page,
  // so both are in view (Playwright's synthetic drag does not survive a scroll between the two).
  const tall = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: desktop.width, height: Math.min(tall + 100, 12000) });
  await page.evaluate(() => window.scrollTo(0, 0));
  const handle = question(page, 'Your CV').locator('.fb-handle');
  const first = page.locator('#fb-fields > li').first();
  await save(page, () => handle.dragTo(first, { targetPosition: { x: 40, y: 4 } }));
  await page.setViewportSize(desktop);
  got = await order(page);
  if (got[0] !== 'Your CV' || got[1] !== 'Full name') fail(`after dragging: ${got}`);
  ok(`dragged with the mouse: ${got.join(', ')}`);

  // Keyboard: focus "Move down: Your CV" and press Enter, then Space on "Move up: About you";
  // focus stays on the button pressed, and the page is not reloaded.
  await question(page, 'Your CV').getByRole('button', { name: /^Move down/ }).focus();
  await save(page, () => page.keyboard.press('Enter'));
  got = await order(page);
  if (got[0] !== 'Full name' || got[1] !== 'Your CV') fail(`after Move down: ${got}`);
  const focused = await page.evaluate(() => document.activeElement && document.activeElement.textContent);
  if (!/^Move down: Your CV/.test(focused || '')) fail(`focus after Move down is on ${focused}`);
  await question(page, 'About you').getByRole('button', { name: /^Move up/ }).focus();
  await save(page, () => page.keyboard.press('Space'));
  got = await order(page);
  if (got.slice(0, 3).join('|') !== 'Full name|About you|Your CV') fail(`after Move up: ${got}`);
  if (!(await page.evaluate(() => window.notReloaded === true))) fail('moving questions reloaded the page');
  ok(`moved with the keyboard, focus kept, no reload: ${got.join(', ')}`);

  // Settings on their own tab: a thank-you message; no minimum fill time so the test need not wait.
  await page.getByRole('navigation', { name: 'Builder' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Thank-you message').fill('Thanks, see you at the conference!');
  await page.getByLabel('Minimum fill time (seconds)').fill('0');
  await check(page, 'settings');
  await save(page, () => page.getByRole('button', { name: 'Save settings' }).click());
  ok('settings saved');

  // The preview is the public page's own template.
  const preview = page.frameLocator('iframe.fb-preview');
  await preview.locator('#fw-form').waitFor();
  const previewText = await preview.locator('body').innerText();
  if (!previewText.includes('Conference registration') || !previewText.includes('Your CV')) fail(`preview shows: ${previewText.slice(0, 200)}`);
  ok('the live preview shows the form');

  await save(page, () => page.getByRole('button', { name: 'Publish' }).click());
  if (!(await page.locator('.page-head .badge').innerText()).includes('published')) fail('not published');
  await page.getByRole('navigation', { name: 'Builder' }).getByRole('link', { name: 'Questions' }).click();
  await check(page, 'builder');
  await page.getByRole('navigation', { name: 'Builder' }).getByRole('link', { name: 'Share' }).click();
  await check(page, 'share');
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
  const resp = await rp.goto(shareLink);
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
  await question(page, 'About you').getByRole('link', { name: /^Remove/ }).click();
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

  // New form: a blank form or one of five templates, as radio cards (axe-core at desktop,
  // 375 px and 390 px, light and dark).
  await page.goto(baseURL + '/app/forms');
  const starts = page.getByRole('group', { name: 'Start from' });
  const cards = await starts.getByRole('radio').count();
  if (cards !== 6) fail(`New form offers ${cards} choices, want a blank form and five templates`);
  if (!(await starts.getByRole('radio', { name: /^Blank form/ }).isChecked())) fail('the blank form is not the default choice');
  await check(page, 'new-form-choices');
  await checkDark(page, 'new-form-choices');
  await page.setViewportSize({ width: 390, height: 844 });
  await expectNoAxeViolations(page, 'New form choices at 390 px');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectNoAxeViolations(page, 'New form choices at 390 px, dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(desktop);
  // Chosen with the keyboard: focus the blank form's card and arrow down to Contact, then
  // Job application, then Event registration.
  await starts.getByRole('radio', { name: /^Blank form/ }).focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowDown');
  if (!(await starts.getByRole('radio', { name: /^Event registration/ }).isChecked())) fail('the arrow keys did not reach Event registration');
  await submit(page, () => page.getByRole('button', { name: 'Create form' }).click());
  if (!/\/app\/forms\/frm_/.test(page.url())) fail(`after creating from a template: ${page.url()}`);
  const eventURL = page.url().split('?')[0].split('#')[0];
  const eventFields = await order(page);
  if (!eventFields.includes('Attending dinner') || !eventFields.includes('Dietary needs') || (await page.locator('h1').innerText()).trim() !== 'Event registration') {
    fail(`the Event registration template made: ${await page.locator('h1').innerText()} with ${eventFields}`);
  }
  ok(`created from the Event registration template: ${eventFields.join(', ')}`);

  // The preview follows the display rule live and posts to itself; nothing is stored.
  const pv = page.frameLocator('iframe.fb-preview');
  await pv.locator('#fw-form').waitFor();
  const dietary = pv.getByRole('group', { name: /Dietary needs/ });
  if (await dietary.isVisible()) fail('the dietary needs show before the dinner is chosen');
  await pv.getByRole('radio', { name: 'Yes' }).check();
  await dietary.waitFor({ state: 'visible' });
  await pv.getByRole('radio', { name: 'No' }).check();
  await dietary.waitFor({ state: 'hidden' });
  await pv.getByLabel('Full name').fill('Ada Lovelace');
  await pv.getByLabel('Email').fill('ada@example.org');
  await pv.getByRole('radio', { name: 'Standard' }).check();
  await pv.getByLabel(/I agree to be contacted/).check();
  await pv.getByRole('button', { name: 'Submit' }).click();
  await pv.getByText('This is a preview: nothing was sent or stored.').waitFor();
  ok('the preview shows the dietary needs only for dinner guests and answers Submit with its own thank-you');

  // Phone width without a reload: the same page, the frame narrowed, the URL keeping it.
  await page.evaluate(() => { window.notReloaded = true; });
  await page.getByRole('link', { name: 'Phone width' }).click();
  await page.locator('#fb-preview-frame.fb-preview-phone').waitFor();
  if (!(await page.evaluate(() => window.notReloaded === true))) fail('switching the preview width reloaded the page');
  if (!page.url().includes('preview=phone')) fail(`the URL does not keep the phone width: ${page.url()}`);
  const frameWidth = await page.locator('iframe.fb-preview').evaluate((el) => el.getBoundingClientRect().width);
  if (frameWidth > 390) fail(`the phone-width preview is ${frameWidth} px wide`);
  if ((await page.getByRole('link', { name: 'Phone width' }).getAttribute('aria-current')) !== 'true') fail('Phone width is not marked current');
  // refreshPreview() (called after saves without a reload) draws the first page again.
  await page.evaluate(() => window.refreshPreview());
  await pv.locator('#fw-form').waitFor();
  await check(page, 'builder-phone-preview');
  await checkDark(page, 'builder-phone-preview');
  await page.goto(eventURL + '/preview');
  await check(page, 'preview-template');
  ok(`the preview switches to phone width (${frameWidth} px) without a reload and refreshes on demand`);
}

run(() => inBrowser(main));
