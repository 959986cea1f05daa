// Browser test of a form in several languages, run by test/languages_browser_test.go
// (TestBrowserLanguages):
//
//   node test/browser/languages.spec.mjs <page url> <artifact dir>
//
// The form (English, German, French): page 1 a required colour (Red/Blue, translated), page 2
// a required name, page 3 a required email. Four walks: German chosen by Accept-Language and
// French by ?lang=fr, each with JavaScript on and off, at desktop width and at 390 px:
//   1. <html lang> and dir, the translated name and option labels, "Schritt 1 von 3";
//   2. Next without the colour: the error in the page's language (the page's script's words
//      with JavaScript, the server's without);
//   3. the colour, Next; the name, Next; the email, Submit: the thank-you page in the language.
// axe-core on every state: zero violations. The Go test checks the stored submissions.
import fs from 'node:fs';
import path from 'node:path';
import { axeAsServed, commandLine, expectNoAxeViolations, fail, launch, ok, run } from './kit.mjs';

const [pageURL, artifactDir] = commandLine('languages.spec.mjs', 'page url', 'artifact dir');
const minFillSeconds = Number(process.env.FORMWARD_MIN_FILL_SECONDS || '1');

const words = {
  de: { title: 'Rückmeldung', colour: 'Farbe', blue: 'Blau', step: 'Schritt 1 von 3', next: 'Weiter', submit: 'Absenden',
    required: 'Dieses Feld ist erforderlich.', name: 'Name', email: 'E-Mail', thanks: 'Vielen Dank!' },
  fr: { title: 'Avis', colour: 'Couleur', blue: 'Bleu', step: 'Étape 1 sur 3', next: 'Suivant', submit: 'Envoyer',
    required: 'Ce champ est obligatoire.', name: 'Nom', email: 'Courriel', thanks: 'Merci !' },
};

let axeContext;
// Without JavaScript axe-core runs on a copy of the page as the server sent it.
const axeOn = (page, resp, js, what) => axeAsServed(axeContext, page, resp, js, what);

async function walk(browser, lang, js, width) {
  const w = words[lang];
  const mode = `${lang}, JavaScript ${js ? 'on' : 'off'}, ${width} px`;
  const headers = lang === 'de' ? { 'Accept-Language': 'de-DE,de;q=0.9,en;q=0.5' } : { 'Accept-Language': 'en-GB,en;q=0.9' };
  const context = await browser.newContext({ javaScriptEnabled: js, viewport: { width, height: 900 }, extraHTTPHeaders: headers });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    const url = lang === 'fr' ? `${pageURL}?lang=fr` : pageURL;
    const resp = await page.goto(url, { waitUntil: 'load' });
    if (!resp || resp.status() !== 200) fail(`${mode}: GET status ${resp?.status()}`);
    const started = Date.now();
    const htmlLang = await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir]);
    if (htmlLang[0] !== lang || htmlLang[1] !== 'ltr') fail(`${mode}: <html lang dir> is ${htmlLang}`);
    const h1 = (await page.locator('h1').first().innerText()).trim();
    if (h1 !== w.title) fail(`${mode}: heading "${h1}", want "${w.title}"`);
    const step = (await page.locator('#fw-progress').innerText()).trim();
    if (step !== w.step) fail(`${mode}: progress "${step}", want "${w.step}"`);
    if ((await page.getByRole('radio', { name: w.blue }).count()) !== 1) fail(`${mode}: no "${w.blue}" option`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    if (overflow > 0) fail(`${mode}: the page scrolls sideways by ${overflow} px`);
    ok(`${mode}: the page is in ${lang}`);
    await axeOn(page, resp, js, `${mode}, page 1`);
    await page.screenshot({ path: path.resolve(artifactDir, `languages-${lang}-${js ? 'js' : 'nojs'}-${width}-1.png`), fullPage: true });

    // Next without the colour: the error in the page's language.
    let errResp;
    const next = page.getByRole('button', { name: w.next });
    if (js) await next.click();
    else [errResp] = await Promise.all([page.waitForNavigation(), next.click()]);
    const err = page.locator('.field-error').first();
    await err.waitFor({ state: 'visible' });
    const msg = (await err.innerText()).trim();
    if (!msg.includes(w.required)) fail(`${mode}: the error says "${msg}", want "${w.required}"`);
    ok(`${mode}: "${w.required}"`);
    await axeOn(page, errResp, js, `${mode}, page 1 with its error`);

    await page.getByRole('radio', { name: w.blue }).check();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: w.next }).click()]);
    await page.getByLabel(new RegExp('^' + w.name)).fill('Ada');
    const [p3] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: w.next }).click()]);
    if ((await page.evaluate(() => document.documentElement.lang)) !== lang) fail(`${mode}: the language did not stick to page 3`);
    await axeOn(page, p3, js, `${mode}, page 3`);
    await page.getByLabel(new RegExp('^' + w.email)).fill('ada@example.org');
    const wait = minFillSeconds * 1000 + 300 - (Date.now() - started);
    if (wait > 0) await page.waitForTimeout(wait);
    const [thanks] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: w.submit }).click()]);
    const heading = (await page.locator('h1').first().innerText()).trim();
    if (heading !== w.thanks) fail(`${mode}: thank-you heading "${heading}", want "${w.thanks}"`);
    ok(`${mode}: submitted, thanked in ${lang}`);
    await axeOn(page, thanks, js, `${mode}, thank-you page`);
    if (errors.length) fail(`${mode}: errors in the page: ${errors.join(' | ')}`);
  } finally {
    await context.close();
  }
}

async function main() {
  fs.mkdirSync(artifactDir, { recursive: true });
  const browser = await launch();
  axeContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    await walk(browser, 'de', true, 1280);
    await walk(browser, 'de', false, 390);
    await walk(browser, 'fr', true, 390);
    await walk(browser, 'fr', false, 1280);
  } finally {
    await browser.close();
  }
}

run(main);
