// Browser test of times in the viewer's time zone, run by TestTimeZonesBrowser
// (test/timezone_browser_test.go):
//
//   node test/browser/timezones.spec.mjs <base url> <setup link> <artifact dir>
//
// The browser is in America/New_York. The first owner signs up; the profile's time zone select
// has the browser's zone preselected by the script (nothing is kept yet) and saving keeps it.
// A response made through the API is shown in New York time with the UTC time on hover, and the
// date filter names the zone. On the billing page the owner sets the workspace's zone, chosen
// from the keyboard. axe-core on every page at desktop width and 375 px: zero violations.
// Screenshots: <artifact dir>/timezones-<page>.png and timezones-<page>-375.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import { api as callAPI, args, checker, createKey, fail, inBrowser, ok, run, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('timezones.spec.mjs');
const { check } = checker(artifactDir, 'timezones');
const api = (method, url, key, body) => callAPI(baseURL, method, url, key, body);
const zone = 'America/New_York';

async function main({ page }) {
  await setUp(page, setupURL);

  // The profile: nothing kept yet, so the script picks the browser's zone and says so.
  await page.goto(baseURL + '/app/settings/profile');
  const select = page.getByRole('combobox', { name: 'Time zone', exact: true });
  if ((await select.inputValue()) !== zone) fail(`the profile preselects "${await select.inputValue()}", want ${zone}`);
  if (!(await page.getByText("We picked your device's time zone").isVisible())) fail('the preselected zone is not explained');
  await check(page, 'profile');
  await submit(page, page.getByRole('button', { name: 'Save time zone' }));
  const notice = (await page.locator('[role=status]').first().innerText()).trim();
  if (!notice.includes(zone)) fail(`after saving the notice says "${notice}"`);
  if ((await select.inputValue()) !== zone) fail(`after saving the select shows "${await select.inputValue()}"`);
  if (await page.getByText("We picked your device's time zone").isVisible()) fail('a kept zone is still called a guess');
  ok(`the profile keeps ${zone}, preselected from the browser`);

  // A response, shown in New York time with UTC on hover.
  const key = await createKey(page, baseURL, 'Zones test', 'read-write');
  const created = await api('POST', '/v1/forms', key, { name: 'Zones', fields: [{ label: 'Name', type: 'text' }] });
  if (created.status !== 201) fail(`POST /v1/forms: ${created.status}`);
  const form = created.json;
  const sent = await api('POST', `/v1/forms/${form.id}/submissions`, key, { data: { [form.fields[0].id]: 'Grace' } });
  if (sent.status !== 201) fail(`POST submission: ${sent.status}`);

  await page.goto(`${baseURL}/app/forms/${form.id}/responses`);
  const time = page.locator('td[data-label="Received"] time').first();
  const [iso, title, shown] = [await time.getAttribute('datetime'), await time.getAttribute('title'), (await time.innerText()).trim()];
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    .formatToParts(new Date(iso)).map((p) => [p.type, p.value]));
  if (!/ E[SD]T$/.test(shown) || !shown.includes(`${parts.hour}:${parts.minute}`)) fail(`the response shows "${shown}" for ${iso}, want ${parts.hour}:${parts.minute} in New York`);
  const utc = new Date(iso).toISOString().slice(11, 16);
  if (!title.endsWith(`${utc} UTC`)) fail(`the hover title is "${title}", want ${utc} UTC`);
  const hint = await page.locator('#f-days-hint').innerText();
  if (!hint.includes(zone)) fail(`the date filter hint says "${hint}"`);
  await check(page, 'responses');
  ok(`the response reads "${shown}", "${title}" on hover; the date filter names ${zone}`);

  // The workspace's zone on the billing page, chosen from the keyboard.
  await page.goto(baseURL + '/app/settings/billing');
  const wsSelect = page.getByLabel('Workspace time zone');
  if ((await wsSelect.inputValue()) !== 'UTC') fail(`the workspace's zone starts as "${await wsSelect.inputValue()}"`);
  await check(page, 'billing');
  await wsSelect.selectOption('Europe/Paris');
  await wsSelect.focus();
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => [document.activeElement.innerText, document.activeElement.closest('form').querySelector('[name=section]').value]);
  if (focused[0].trim() !== 'Save' || focused[1] !== 'time_zone') fail(`Tab from the select reaches "${focused[0]}" of ${focused[1]}`);
  await submit(page, () => page.keyboard.press('Enter'));
  const saved = (await page.locator('[role=status]').first().innerText()).trim();
  if (!saved.includes('Europe/Paris') || (await page.getByLabel('Workspace time zone').inputValue()) !== 'Europe/Paris') fail(`after saving the workspace's zone: "${saved}"`);
  ok("the workspace's zone is Europe/Paris");
}

run(() => inBrowser(main, { timezoneId: zone }));
