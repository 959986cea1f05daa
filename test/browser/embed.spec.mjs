// Browser test of the two recipes of docs/embedding.md, run by test/browser_test.go:
//
//   node test/browser/embed.spec.mjs <owner page with the iframe> <owner page with the script> <artifact dir>
//
// Both owner pages are served by the Go test on an origin other than Formward's, with the
// recipes' code copied from docs/embedding.md. The iframe must show the form; the script must
// show an error next to a field for a bad answer, then post JSON (solving the proof of work
// itself) and show its thank-you text. Prints "ok: ..." lines; exits 1 after "FAIL: ...".
import path from 'node:path';
import { commandLine, fail, launch, run } from './kit.mjs';

const [framePage, scriptPage, artifactDir] = commandLine('embed.spec.mjs', 'iframe page', 'script page', 'artifact dir');
const minFill = Number(process.env.FORMWARD_MIN_FILL_SECONDS || '0');

async function main() {
  const browser = await launch();
  const errors = [];
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(20000);
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 422/.test(m.text())) errors.push(m.text());
    });

    // 1. The iframe shows the hosted form (frame-ancestors allows this origin).
    await page.goto(framePage, { waitUntil: 'load' });
    const frame = page.frameLocator('iframe');
    await frame.getByRole('button', { name: 'Submit' }).waitFor();
    await page.screenshot({ path: path.resolve(artifactDir, 'embed-iframe.png'), fullPage: true });
    console.log('ok: the <iframe> recipe shows the form inside the owner\'s page');

    // 2. The script recipe: a bad email gets an error next to the field, then a good post.
    await page.goto(scriptPage, { waitUntil: 'load' });
    const t0 = Date.now();
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByLabel('Age').fill('41');
    const wait = minFill * 1000 + 300 - (Date.now() - t0);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await page.getByRole('button', { name: 'Sign up' }).click();
    const email = page.getByLabel('Email');
    await page.locator('[aria-invalid="true"]').first().waitFor();
    const described = await email.getAttribute('aria-describedby');
    const errorText = described ? (await page.locator(`[id="${described}"]`).innerText()).trim() : '';
    if (!errorText) fail('the script recipe shows no error next to the email field');
    console.log(`ok: the <script> recipe shows the server's error next to the field: "${errorText}"`);

    await email.fill('embedded@example.org');
    await new Promise((r) => setTimeout(r, minFill * 1000 + 300)); // the new token's min fill time
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByText('Thank you!').waitFor();
    await page.screenshot({ path: path.resolve(artifactDir, 'embed-script.png'), fullPage: true });
    console.log('ok: the <script> recipe posted JSON (with its proof of work) and shows its thank-you text');
    if (errors.length) fail('errors in the browser console: ' + errors.join(' | '));
  } finally {
    await browser.close();
  }
}

run(main);
