// Browser test of a form's theme, run by test/theme_browser_test.go (TestThemeBrowser):
//
//   node test/browser/theme.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner signs up, creates a form with two fields and, in the builder's Theme settings,
// is refused a contrast-failing accent (the ratio on the accent field, the rest kept) and a text
// file named .png as logo; then saves an accent, the "follow the device" appearance and a PNG
// logo, and publishes. A respondent opens the public page: the <html> class, the theme
// stylesheet and the logo are there, the Submit button wears the accent, the CSP refuses
// nothing, and axe-core finds 0 violations at desktop width, 390 px and 375 px, light and dark.
// The owner then picks the dark appearance, and the page is dark whatever the device says.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import fs from 'node:fs';
import path from 'node:path';
import { args, axe, checker, fail, inBrowser, ok, run, save, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('theme.spec.mjs');
const { check, checkDark } = checker(artifactDir, 'theme');

// A 1×1 PNG, and a text file posing as one.
const png = path.resolve(artifactDir, 'theme-logo.png');
const fake = path.resolve(artifactDir, 'theme-fake.png');

async function saveTheme(page, accent, appearance) {
  await page.locator('#s-accent').fill(accent);
  await page.locator(`#s-appearance-${appearance}`).check();
  return save(page, () => page.getByRole('button', { name: 'Save settings' }).click());
}

async function main({ browser, page, watch }) {
  fs.mkdirSync(artifactDir, { recursive: true });
  fs.writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'));
  fs.writeFileSync(fake, 'this is text, not an image\n');

  await setUp(page, setupURL);
  await page.getByLabel('Form name').fill('Themed form');
  await submit(page, () => page.getByRole('button', { name: 'Create form' }).click());
  const formURL = page.url().split('?')[0].split('#')[0];
  for (const [type, label] of [['text', 'Full name'], ['radio', 'Meal']]) {
    await page.locator('#add-type').selectOption(type);
    await page.locator('#add-label').fill(label);
    await save(page, () => page.locator('#add-submit').click());
  }
  ok('created a form with two fields');
  await page.getByRole('navigation', { name: 'Builder' }).getByRole('link', { name: 'Settings' }).click();

  // A yellow accent on the light page: refused with its ratio, the name kept.
  await page.locator('#s-name').fill('Themed form (renamed)');
  let status = await saveTheme(page, '#ffee00', 'light');
  if (status !== 422) fail(`a failing accent: ${status}`);
  const accentError = (await page.locator('#s-accent-error').innerText()).trim();
  if (!accentError.includes('1.1:1') || !accentError.includes('3:1')) fail(`accent error: "${accentError}"`);
  if ((await page.locator('#s-accent').getAttribute('aria-invalid')) !== 'true') fail('the accent input is not marked invalid');
  if ((await page.locator('#s-name').inputValue()) !== 'Themed form (renamed)') fail('the typed name was lost');
  await check(page, 'accent-error');
  ok(`a contrast-failing accent is refused on its field: "${accentError}"`);

  // The colour picker (the page's script) fills the text input, which is what is posted.
  const picker = page.locator('#s-accent-picker');
  if (!(await picker.isVisible())) fail('no colour picker beside the accent input');
  if ((await picker.inputValue()) !== '#ffee00') fail(`the picker shows ${await picker.inputValue()}, not the typed accent`);
  await picker.fill('#2563eb');
  if ((await page.locator('#s-accent').inputValue()) !== '#2563eb') fail('the picker does not fill the accent input');
  ok('the colour picker and the accent input agree');

  status = await saveTheme(page, '#2563eb', 'auto');
  if (status !== 200 || !page.url().startsWith(formURL)) fail(`after saving the theme: ${status} ${page.url()}`);
  ok('saved accent #2563eb and the auto appearance');

  // The logo: a text file named .png is refused, a PNG accepted.
  await page.locator('#s-logo').setInputFiles(fake);
  status = await save(page, () => page.getByRole('button', { name: 'Upload logo' }).click());
  if (status !== 422) fail(`a fake PNG: ${status}`);
  const logoError = (await page.locator('#s-logo-error').innerText()).trim();
  if (!logoError.includes('PNG, JPEG, WebP or GIF')) fail(`logo error: "${logoError}"`);
  await check(page, 'logo-error');
  ok(`a text file named .png is refused on the logo field: "${logoError}"`);
  await page.locator('#s-logo').setInputFiles(png);
  await save(page, () => page.getByRole('button', { name: 'Upload logo' }).click());
  if ((await page.locator('img.fb-logo').count()) !== 1) fail('the builder does not show the uploaded logo');
  await check(page, 'builder');
  await checkDark(page, 'builder');
  ok('uploaded a PNG logo');

  await save(page, () => page.getByRole('button', { name: 'Publish' }).click());
  await page.getByRole('navigation', { name: 'Builder' }).getByRole('link', { name: 'Share' }).click();
  const shareLink = (await page.locator('#share-link').innerText()).trim();

  // The respondent's page.
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const rp = await ctx.newPage();
  rp.setDefaultTimeout(20000);
  watch(rp);
  const cspErrors = [];
  rp.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text()); });
  const resp = await rp.goto(shareLink, { waitUntil: 'load' });
  if (resp.status() !== 200) fail(`public page: ${resp.status()}`);
  if ((await rp.locator('html').getAttribute('class')) !== 'theme-auto') fail('no theme-auto class on <html>');
  if ((await rp.locator('link[rel="stylesheet"][href*="/theme.css?v="]').count()) !== 1) fail('no theme stylesheet');
  const logoLoaded = await rp.locator('img.logo').evaluate((img) => img.complete && img.naturalWidth > 0);
  if (!logoLoaded) fail('the logo did not load');
  const button = rp.getByRole('button', { name: 'Submit' });
  const bg = () => button.evaluate((b) => getComputedStyle(b).backgroundColor);
  if ((await bg()) !== 'rgb(37, 99, 235)') fail(`Submit is ${await bg()}, not the accent`);
  const pageBg = () => rp.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const light = await pageBg();
  await check(rp, 'public-auto');
  await rp.setViewportSize({ width: 390, height: 844 });
  await axe(rp, 'the themed public page at 390 px');
  await rp.emulateMedia({ colorScheme: 'dark' });
  await axe(rp, 'the themed public page at 390 px, dark');
  await rp.setViewportSize({ width: 1280, height: 900 });
  const dark = await pageBg();
  if (dark === light) fail(`auto: the page stays ${light} when the device is dark`);
  if ((await bg()) !== 'rgb(37, 99, 235)') fail(`dark: Submit is ${await bg()}, not the accent`);
  await rp.emulateMedia({ colorScheme: 'light' });
  await checkDark(rp, 'public-auto');
  ok(`the public page follows the device (${light} / ${dark}) with the accent and the logo; axe-core 0 violations at 1280, 390 and 375 px, light and dark`);

  // The dark appearance: dark whatever the device prefers.
  await page.goto(formURL + '?tab=settings');
  await saveTheme(page, '#2563eb', 'dark');
  await rp.reload({ waitUntil: 'load' });
  if ((await rp.locator('html').getAttribute('class')) !== 'theme-dark') fail('the dark appearance does not show at once');
  if ((await pageBg()) !== dark) fail(`dark appearance on a light device: ${await pageBg()}`);
  await check(rp, 'public-dark');
  await rp.setViewportSize({ width: 390, height: 844 });
  await axe(rp, 'the dark public page at 390 px');
  ok('the dark appearance shows at once, axe-core 0 violations at 1280, 390 and 375 px');

  if (cspErrors.length) fail(`CSP violations: ${cspErrors.join(' | ')}`);
  ok('no Content-Security-Policy violation on the themed page');
  await ctx.close();
}

run(() => inBrowser(main));
