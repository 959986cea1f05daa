// Browser test of uploaded files in the dashboard, run by TestFilesBrowser
// (test/files_browser_test.go):
//
//   node test/browser/files.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner signs up from the logged link, creates an API key and a form with a file
// question, and answers it on the public page with a PDF. The responses table and the response
// page name the file with its size ("curriculum-vitae.pdf, 12 KB") as a link to
// /app/files/<submission>/<file>; clicking it downloads the same bytes. The CSV export carries
// that link, which opens for the signed-in member. axe-core runs on the table and the response
// at desktop width, at 375 px and in dark mode: zero violations. Screenshots:
// <artifact dir>/files-<page>.png, files-<page>-375.png, files-<page>-dark.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import fs from 'node:fs';
import { api as callAPI, args, checker, createKey, fail, inBrowser, ok, run, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('files.spec.mjs');
const { check, checkDark, shots } = checker(artifactDir, 'files');
const api = (method, url, key, body) => callAPI(baseURL, method, url, key, body);

// A 12,288-byte PDF-looking file: "12 KB".
const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(12288 - 9, 'x')]);

async function main({ page }) {
  await setUp(page, setupURL);
  const key = await createKey(page, baseURL, 'Files test', 'read-write');

  const created = await api('POST', '/v1/forms', key, {
    name: 'Job application',
    fields: [{ label: 'Full name', type: 'text', required: true }, { label: 'CV', type: 'file' }],
  });
  if (created.status !== 201) fail(`POST /v1/forms: ${created.status}`);
  const form = created.json;
  const published = await api('PATCH', `/v1/forms/${form.id}`, key, {
    status: 'published', settings: { spam: { honeypot: true, min_fill_seconds: 0 } },
  });
  if (published.status !== 200) fail(`publish: ${published.status} ${published.text}`);

  // A respondent answers on the public page, with a file.
  await page.goto(`${baseURL}/f/${form.id}`);
  await page.getByLabel('Full name').fill('Grace Hopper');
  await page.getByLabel('CV').setInputFiles({ name: 'curriculum-vitae.pdf', mimeType: 'application/pdf', buffer: pdf });
  await page.locator('form button[type=submit]').first().click();
  await page.getByRole('heading', { name: /thank you/i }).first().waitFor();
  ok('a response with a file posted on the public page');

  // The table names the file with its size, linked for members.
  await page.goto(`${baseURL}/app/forms/${form.id}/responses`);
  const link = page.locator('table.responses a.file-link');
  if ((await link.count()) !== 1) fail(`the table has ${await link.count()} file links`);
  const name = (await link.innerText()).trim();
  if (name !== 'curriculum-vitae.pdf, 12 KB') fail(`the file shows as "${name}"`);
  const href = await link.getAttribute('href');
  if (!/^\/app\/files\/sub_[0-9A-Za-z]+\/obj_[0-9A-Za-z]+\/curriculum-vitae\.pdf$/.test(href)) fail(`the file links to ${href}`);
  if ((await page.content()).includes('sig=')) fail('the table shows a signed link');
  await check(page, 'table');
  ok(`the table names the file "${name}", linked to ${href}`);

  // The response page too; the link downloads the file.
  await submit(page, page.locator('table.responses tbody tr').first().getByRole('link').first());
  const detailLink = page.locator('.answers a.file-link');
  if ((await detailLink.innerText()).trim() !== 'curriculum-vitae.pdf, 12 KB' || (await detailLink.getAttribute('href')) !== href) {
    fail('the response page does not name the file as the table does');
  }
  await check(page, 'detail');
  await checkDark(page, 'detail');
  const [download] = await Promise.all([page.waitForEvent('download'), detailLink.click()]);
  const got = fs.readFileSync(await download.path());
  if (!got.equals(pdf)) fail(`the download has ${got.length} bytes, not the ${pdf.length} uploaded`);
  if (download.suggestedFilename() !== 'curriculum-vitae.pdf') fail(`downloaded as ${download.suggestedFilename()}`);
  ok('the file link downloads the uploaded bytes as curriculum-vitae.pdf');

  // The CSV export carries the same link under the public URL; it opens for the member.
  const csv = await page.request.get(`${baseURL}/app/forms/${form.id}/export?format=csv`);
  if (csv.status() !== 200) fail(`CSV export: ${csv.status()}`);
  const text = await csv.text();
  if (!text.includes(',' + baseURL + href + ',')) fail(`the CSV export lacks ${baseURL + href}:\n${text}`);
  const opened = await page.request.get(baseURL + href);
  if (opened.status() !== 200 || !(await opened.body()).equals(pdf)) fail(`the exported link gives ${opened.status()}`);
  ok('the CSV export carries the member link, and it opens for the signed-in member');
  ok(`screenshots: ${shots.length} files in ${artifactDir}`);
}

run(() => inBrowser(main, { acceptDownloads: true }));
