// Browser test of building a whole form in the dashboard alone, run by
// test/dashboard_browser_test.go (TestBuilderPagesBrowser):
//
//   node test/browser/builder_pages.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner builds, in the builder alone, a two-page form: a question shown only for one
// answer (display logic from the pickers), a required file upload on page 2, a hidden field
// prefilled from the link, and a theme. With JavaScript off, the same builder moves a question
// and adds and removes a page break with full round trips. The form is published and filled by
// two respondents, one with JavaScript and one without, at phone width; both answers are found
// in the responses table. axe-core runs on every builder state at desktop, 375 px and 390 px,
// and in the dark appearance (zero violations); screenshots:
// <artifact dir>/builder-pages-<state>[-375|-dark].png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import path from 'node:path';
import { args, axe, checker, desktop, expectNoAxeViolations, fail, inBrowser, ok, run, save, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('builder_pages.spec.mjs');
const { check: checkBoth, checkDark } = checker(artifactDir, 'builder-pages', { iframes: false });
const phone390 = { width: 390, height: 844 };
const onePixelPNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

// check runs axe-core at desktop and 375 px (with screenshots), then at 390 px, light and dark.
async function check(page, name) {
  await checkBoth(page, name);
  const size = page.viewportSize();
  await page.setViewportSize(phone390);
  await expectNoAxeViolations(page, `${name} (390 px)`, { iframes: false });
  await page.setViewportSize(size);
  await checkDark(page, name);
}

const literally = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function question(page, label) {
  return page.locator('#fb-fields > li.fb-field').filter({ has: page.locator('.fb-field-title strong', { hasText: new RegExp(`^${literally(label)}$`) }) });
}

async function layout(page) {
  return page.locator('#fb-fields > li').evaluateAll((els) => els.map((el) => (el.classList.contains('fb-break') ? '|' : el.querySelector('.fb-field-title strong').textContent.trim())));
}


async function addQuestion(page, type, label) {
  await page.locator('#add-type').selectOption(type);
  await page.locator('#add-label').fill(label);
  const status = await save(page, () => page.locator('#add-submit').click());
  if (status !== 200) fail(`adding ${label}: ${status}`);
}

async function main({ browser, page, watch }) {
  await setUp(page, setupURL);
  await page.getByLabel('Form name').fill('Volunteer sign-up');
  await submit(page, () => page.getByRole('button', { name: 'Create form' }).click());
  const formURL = page.url().split('?')[0].split('#')[0];
  await page.evaluate(() => { window.notReloaded = true; });

  // Questions, then Role's options and the required flags.
  await addQuestion(page, 'text', 'Full name');
  await addQuestion(page, 'radio', 'Role');
  await addQuestion(page, 'text', 'School');
  await addQuestion(page, 'email', 'Email');
  await addQuestion(page, 'file', 'CV');
  const role = question(page, 'Role');
  await role.locator('.fb-edit > summary').click();
  await role.locator('.fb-opt-list li input').nth(0).fill('Student');
  await role.locator('.fb-opt-list li input').nth(1).fill('Staff');
  await role.getByLabel('Required').check();
  await save(page, () => role.getByRole('button', { name: /^Save/ }).click());
  const cv = question(page, 'CV');
  await cv.locator('.fb-edit > summary').click();
  await cv.getByLabel('Required').check();
  await cv.getByLabel('Accepted types').fill('text/plain, application/pdf');
  await save(page, () => cv.getByRole('button', { name: /^Save/ }).click());
  await check(page, 'questions');
  ok('five questions added, Role with two options, CV required');

  // "+" below Full name inserts between two questions.
  const name = question(page, 'Full name');
  await name.locator('.fb-insert > summary').click();
  await name.locator('.fb-insert select').selectOption('text');
  await name.locator('.fb-insert input[name=label]').fill('Phone');
  await check(page, 'insert-open');
  await save(page, () => name.locator('.fb-insert').getByRole('button', { name: /^Add question/ }).click());
  let got = await layout(page);
  if (got.join(',') !== 'Full name,Phone,Role,School,Email,CV') fail(`after inserting below Full name: ${got}`);
  // Duplicate, then remove the copy again (a question without answers goes at once).
  await save(page, () => question(page, 'Phone').getByRole('button', { name: /^Duplicate/ }).click());
  got = await layout(page);
  if (got[2] !== 'Phone (copy)') fail(`after duplicating Phone: ${got}`);
  ok(`inserted Phone below Full name and duplicated it: ${got.join(', ')}`);
  // Remove goes through its confirmation page (which says how many answers a question has):
  // the one change that leaves the builder.
  await removeQuestion(page, 'Phone (copy)');
  await removeQuestion(page, 'Phone');
  await page.evaluate(() => { window.notReloaded = true; });

  // A page break below Email: CV on page 2. An empty page is refused in words.
  await question(page, 'Email').locator('.fb-insert > summary').click();
  await save(page, () => question(page, 'Email').getByRole('button', { name: /^Start a new page below/ }).click());
  got = await layout(page);
  if (got.join(',') !== 'Full name,Role,School,Email,|,CV') fail(`after the page break: ${got}`);
  const status = await save(page, () => page.locator('#down-break-1').click());
  if (status !== 422 || !(await page.locator('#page-error').innerText()).includes('would have no questions')) fail(`an empty page 2 was not refused (${status})`);
  await check(page, 'two-pages');
  ok('page break below Email; moving it below the last question is refused: "Page 2 would have no questions"');

  // Display logic: School only when Role is Student. The value picker follows the question.
  const school = question(page, 'School');
  await school.locator('.fb-edit > summary').click();
  await school.getByLabel('Show it only when…').check();
  const cond = school.locator('.fb-cond').first();
  if ((await cond.locator('[name=cv_0]').evaluate((el) => el.tagName)) !== 'INPUT') fail('the value picker is not free text before a question is chosen');
  await cond.getByLabel('Question').selectOption({ label: 'Role' });
  if ((await cond.locator('[name=cv_0]').evaluate((el) => el.tagName)) !== 'SELECT') fail('the value picker does not offer Role\'s options');
  await cond.getByLabel('Value').selectOption('Student');
  await check(page, 'logic-pickers');
  await save(page, () => school.getByRole('button', { name: /^Save/ }).click());
  const sentence = (await question(page, 'School').locator('.fb-logic-sentence').innerText()).trim();
  if (sentence !== 'Shown when Role is Student') fail(`logic sentence: ${sentence}`);
  ok(`display logic from the pickers: "${sentence}"`);

  // A hidden field filled from the link.
  await page.getByLabel('Name', { exact: true }).fill('Campaign');
  await page.getByLabel('Key in the link').fill('campaign');
  await save(page, () => page.getByRole('button', { name: 'Add hidden field' }).click());
  const prefill = (await page.locator('#hidden .fb-prefill code').innerText()).trim();
  if (!prefill.endsWith('?campaign=VALUE')) fail(`prefill link: ${prefill}`);
  await check(page, 'hidden-field');
  ok(`hidden field with its prefill link ${prefill}`);
  if (!(await page.evaluate(() => window.notReloaded === true))) fail('building the form reloaded the page');
  ok('every change but Remove (which confirms on its own page) was saved without a page reload');

  // Without JavaScript: the same builder, full round trips.
  const nojs = await browser.newContext({ viewport: desktop, javaScriptEnabled: false, storageState: await page.context().storageState() });
  const np = await nojs.newPage();
  np.setDefaultTimeout(20000);
  await np.goto(formURL);
  await submit(np, () => question(np, 'Full name').getByRole('button', { name: /^Move down/ }).click());
  got = await layout(np);
  if (got.join(',') !== 'Role,Full name,School,Email,|,CV') fail(`without JavaScript, after Move down: ${got}`);
  await submit(np, () => question(np, 'Role').getByRole('button', { name: /^Move down/ }).click());
  await question(np, 'School').locator('.fb-insert > summary').click();
  await submit(np, () => question(np, 'School').getByRole('button', { name: /^Start a new page below/ }).click());
  got = await layout(np);
  if (got.join(',') !== 'Full name,Role,School,|,Email,|,CV') fail(`without JavaScript, after a second page break: ${got}`);
  await np.screenshot({ path: path.resolve(artifactDir, 'builder-pages-no-javascript.png'), fullPage: true });
  await submit(np, () => np.locator('#remove-break-1').click());
  got = await layout(np);
  if (got.join(',') !== 'Full name,Role,School,Email,|,CV') fail(`without JavaScript, after removing a page break: ${got}`);
  await nojs.close();
  ok('without JavaScript: moved questions, added and removed a page break');

  // Settings: no minimum fill time (so the test need not wait) and a thank-you message.
  await page.goto(formURL + '?tab=settings');
  await page.getByLabel('Minimum fill time (seconds)').fill('0');
  await page.getByLabel('Thank-you message').fill('Thank you for volunteering!');
  // The theme: a green accent and the dark appearance, then a logo.
  await page.locator('#s-accent').fill('#1e3a8a');
  await page.locator('#s-appearance-dark').check();
  let saved = await save(page, () => page.getByRole('button', { name: 'Save settings' }).click());
  if (saved !== 422) fail(`a dark-green accent on a dark page should fail its contrast check: ${saved}`);
  ok(`the accent is refused on the dark page: "${(await page.locator('#s-accent-error').innerText()).trim()}"`);
  await page.locator('#s-accent').fill('#4ade80');
  saved = await save(page, () => page.getByRole('button', { name: 'Save settings' }).click());
  if (saved !== 200) fail(`saving the theme: ${saved}`);
  await page.locator('#s-logo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from(onePixelPNG, 'base64') });
  await save(page, () => page.getByRole('button', { name: 'Upload logo' }).click());
  if ((await page.locator('img.fb-logo').count()) !== 1) fail('the logo was not uploaded');
  await check(page, 'settings');
  await save(page, () => page.getByRole('button', { name: 'Publish' }).click());
  await page.goto(formURL + '?tab=share');
  const link = (await page.locator('#share-link').innerText()).trim();
  ok(`published at ${link}`);

  // Respondent with JavaScript, at phone width, from the newsletter link.
  for (const js of [true, false]) {
    const ctx = await browser.newContext({ viewport: phone390, javaScriptEnabled: js });
    const rp = await ctx.newPage();
    rp.setDefaultTimeout(20000);
    watch(rp);
    const campaign = js ? 'newsletter' : 'flyer';
    await rp.goto(`${link}?campaign=${campaign}`);
    if ((await rp.locator('html').getAttribute('class')) !== 'theme-dark') fail('the public page does not wear the dark theme');
    if ((await rp.locator('img.logo').count()) !== 1) fail('the public page has no logo');
    // axe-core needs scripts: the pages without JavaScript are the same HTML, checked with it.
    if (js) await axe(rp, 'the public page 1');
    await rp.getByLabel('Full name').fill(js ? 'Grace Hopper' : 'Alan Turing');
    await rp.getByRole('radio', { name: js ? 'Student' : 'Staff' }).check();
    if (js) {
      await rp.getByLabel('School').waitFor({ state: 'visible' });
      await rp.getByLabel('School').fill('Vassar');
    }
    await rp.getByLabel('Email').fill(js ? 'grace@example.org' : 'alan@example.org');
    await submit(rp, () => rp.getByRole('button', { name: 'Next' }).click());
    await rp.getByLabel('CV').waitFor();
    if (js) await axe(rp, 'the public page 2');
    await rp.screenshot({ path: path.resolve(artifactDir, `builder-pages-public-page2-js-${js ? 'on' : 'off'}.png`), fullPage: true });
    await rp.getByLabel('CV').setInputFiles({ name: `${campaign}-cv.txt`, mimeType: 'text/plain', buffer: Buffer.from('A CV\n') });
    await submit(rp, () => rp.getByRole('button', { name: 'Submit' }).click());
    if (!(await rp.locator('body').innerText()).includes('Thank you for volunteering!')) fail(`after submitting (JavaScript ${js ? 'on' : 'off'}): ${(await rp.locator('body').innerText()).slice(0, 300)}`);
    await ctx.close();
    ok(`a respondent with JavaScript ${js ? 'on' : 'off'} filled both pages from the ${campaign} link and submitted`);
  }

  // Both answers in the responses table, the hidden field and the file included.
  await page.goto(formURL + '/responses');
  const table = await page.locator('main').innerText();
  for (const want of ['Grace Hopper', 'Alan Turing', 'newsletter', 'flyer', 'Student', 'Staff', 'Vassar']) {
    if (!table.includes(want)) fail(`the responses table lacks ${want}: ${table.slice(0, 600)}`);
  }
  ok('both responses are in the table with the campaign from the link, the role and the school');
}

// removeQuestion removes a question without answers: the confirmation (if the server asks)
// is answered, and the builder comes back without it.
async function removeQuestion(page, label) {
  const q = question(page, label);
  const ctl = q.locator('.fb-field-moves button', { hasText: /^Remove/ });
  if (await ctl.count()) {
    await save(page, () => ctl.click());
  } else {
    await q.getByRole('link', { name: /^Remove/ }).click();
    await submit(page, () => page.getByRole('button', { name: /^Remove/ }).click());
  }
  if ((await question(page, label).count()) !== 0) fail(`${label} was not removed`);
}

run(() => inBrowser(main));
