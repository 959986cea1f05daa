// Browser test of the dashboard's webhook pages, run by test/dashboard_browser_test.go
// (TestRoutingBrowser):
//
//   node test/browser/routing.spec.mjs <base url> <setup link> <artifact dir> <receiver url> <control url>
//
// The first owner signs up from the setup link, opens Webhooks from the navigation, is refused an
// http:// URL next to the control, creates a webhook to the HTTPS receiver (which answers 500),
// sends a test event and sees the failing attempt (status 500, duration, error) in the delivery
// log; then the receiver is fixed (POST <control url>/heal), Retry is pressed and the delivery
// shows as delivered; finally the webhook is deleted after confirmation. Everything is done with
// the keyboard where it matters (Tab to the controls, Space to tick, Enter to submit). axe-core
// runs on every page at desktop width and at 375 px: zero violations. Screenshots:
// <artifact dir>/routing-<page>.png and routing-<page>-375.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import { args, checker, createKey, fail, inBrowser, ok, owner, run, setUp, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir, receiverURL, controlURL] = args('routing.spec.mjs', 'receiver url', 'control url');
const { check, checkDark, shots } = checker(artifactDir, 'routing');

// logUntil reloads the webhook page until its newest delivery's text matches re.
async function logUntil(page, re, what) {
  let text = '';
  for (let i = 0; i < 100; i++) {
    await page.reload({ waitUntil: 'load' });
    text = await page.locator('.route-log-item').first().innerText().catch(() => '');
    if (re.test(text)) return text;
    await page.waitForTimeout(200);
  }
  fail(`${what}: the delivery log says "${text}"`);
}

async function main({ page }) {
  // First-run setup.
  await setUp(page, setupURL);
  ok('signed up as the first owner');

  // The webhooks page from the navigation.
  await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
  await page.waitForURL('**/app/webhooks');
  if ((await page.getByRole('link', { name: 'Webhooks', exact: true }).getAttribute('aria-current')) !== 'page') fail('the nav does not mark Webhooks');
  await check(page, 'webhooks-empty');
  await page.getByRole('link', { name: 'New webhook' }).click();
  await page.waitForURL('**/app/webhooks/new');
  await check(page, 'webhook-new');

  // An http:// URL and no event: refused, the messages next to their controls.
  await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/in');
  await page.getByLabel(/A response is submitted/).uncheck();
  let resp = await submit(page, page.getByRole('button', { name: 'Create webhook' }));
  if (resp.status() !== 422) fail(`invalid webhook: status ${resp.status()}`);
  const urlError = (await page.locator('#f-url-error').innerText()).trim();
  const eventsError = (await page.locator('#events-error').innerText()).trim();
  if (!urlError || !eventsError) fail(`no inline errors: url "${urlError}", events "${eventsError}"`);
  if ((await page.getByLabel('Endpoint URL').getAttribute('aria-invalid')) !== 'true') fail('the URL field is not marked invalid');
  ok(`invalid webhook refused inline: "${urlError}" / "${eventsError}"`);
  await check(page, 'webhook-invalid');

  // Created with the keyboard: type the URL, Tab to the first event, Space ticks it, Enter submits.
  await page.getByLabel('Endpoint URL').fill(receiverURL);
  await page.getByLabel('Endpoint URL').focus();
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.activeElement?.id);
  if (focused !== 'event-submission.created') fail(`Tab from the URL reaches "${focused}", not the first event`);
  await page.keyboard.press('Space');
  await page.getByLabel(/A form is published/).check();
  await page.getByLabel('Signing secret').fill('whsec-routing-test');
  await Promise.all([page.waitForNavigation(), page.getByLabel('Signing secret').press('Enter')]);
  if (!/\/app\/webhooks\/whk_/.test(page.url())) fail(`after create: ${page.url()} ${(await page.locator('main').innerText()).slice(0, 300)}`);
  if ((await page.content()).includes('whsec-routing-test')) fail('the secret is shown back');
  ok('webhook created to the HTTPS receiver; the secret is not shown back');
  await check(page, 'webhook');

  // A test event: the receiver answers 500, the log shows the failing attempt.
  await submit(page, page.getByRole('button', { name: 'Send a test event' }));
  let entry = await logUntil(page, /Failing/, 'failing test event');
  if (!/webhook\.test/.test(entry) || !/500/.test(entry) || !/\d+ ms/.test(entry)) fail(`failing delivery: ${entry}`);
  ok('the failing delivery shows status 500, its duration and error');
  await check(page, 'webhook-failing');

  // Fix the receiver, retry, see success.
  const healed = await fetch(controlURL + '/heal', { method: 'POST' });
  if (healed.status !== 204) fail(`heal: ${healed.status}`);
  const retry = page.getByRole('button', { name: /^Retry/ }).first();
  await retry.focus();
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
  const flash = (await page.locator('[role=status]').first().innerText()).trim();
  if (!/queued again/i.test(flash)) fail(`after retry the notice says "${flash}"`);
  entry = await logUntil(page, /Delivered/, 'retried delivery');
  if (!/204/.test(entry)) fail(`retried delivery: ${entry}`);
  ok('after the receiver was fixed, Retry delivered the event (204)');
  await check(page, 'webhook-delivered');

  // Replay events: the start defaults to when the endpoint went down; the job's progress shows.
  const since = await page.getByLabel('Since').inputValue();
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(since)) fail(`the replay form's start: "${since}"`);
  await submit(page, page.getByRole('button', { name: 'Replay events' }));
  const started = (await page.locator('[role=status]').first().innerText()).trim();
  if (!/Replay started/.test(started)) fail(`after Replay events the notice says "${started}"`);
  let replay = '';
  for (let i = 0; i < 100 && !/Done/.test(replay); i++) {
    await page.reload({ waitUntil: 'load' });
    replay = await page.locator('#replays .route-log-item').first().innerText().catch(() => '');
    if (!/Done/.test(replay)) await page.waitForTimeout(200);
  }
  if (!/Done/.test(replay) || !/events sent/.test(replay)) fail(`the replay: "${replay}"`);
  if (!(await page.getByRole('button', { name: 'Replay events' }).isVisible())) fail('no Replay events button once the replay is done');
  ok('Replay events from the webhook page: started, then done, its progress shown');
  await check(page, 'webhook-replayed');

  await page.getByRole('link', { name: '← All webhooks' }).click();
  await page.waitForURL('**/app/webhooks');
  const row = await page.locator('tbody tr').first().innerText();
  if (!row.includes(receiverURL) || !row.includes('Delivered')) fail(`the list: ${row}`);
  ok('the list shows the endpoint and its last delivery');
  await check(page, 'webhooks');

  // Delete after confirmation.
  await page.locator('tbody tr a').first().click();
  await page.getByRole('link', { name: 'Delete', exact: true }).click();
  await page.waitForURL('**/delete');
  await check(page, 'webhook-delete');
  await submit(page, page.getByRole('button', { name: 'Delete webhook' }));
  if (!page.url().endsWith('/app/webhooks')) fail(`after delete: ${page.url()}`);
  if (!(await page.locator('main').innerText()).includes('No webhooks yet')) fail('the webhook is still listed');
  ok('webhook deleted after confirmation');

  // Integrations: the page, a key that is not a service account refused next to its control.
  await page.getByRole('link', { name: 'Integrations', exact: true }).click();
  await page.waitForURL('**/app/integrations');
  await check(page, 'integrations');
  await page.getByLabel('Service account key (JSON)').fill('{"client_email":"x"}');
  resp = await submit(page, page.getByRole('button', { name: 'Connect Google Sheets' }));
  if (resp.status() !== 422) fail(`invalid service account: ${resp.status()}`);
  if (!(await page.locator('#sheets-key-error').innerText()).trim()) fail('no error next to the service account key');
  if ((await page.content()).includes('"client_email":"x"')) fail('the posted credentials are drawn back');
  await check(page, 'integrations-invalid');
  await page.getByLabel('Bot token').fill('xoxb-routing-test-token');
  await submit(page, page.getByRole('button', { name: 'Connect Slack' }));
  if ((await page.content()).includes('xoxb-routing-test-token')) fail('the bot token is shown back');
  if (!(await page.locator('tbody').innerText()).includes('Slack')) fail('Slack is not listed');
  ok('Slack connected; credentials never shown back');

  // Workflows: a form made through the API with a key from the keys page, then the builder.
  const key = await createKey(page, baseURL, 'routing test', 'read-write');
  const made = await fetch(baseURL + '/v1/forms', { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Contact', fields: [{ label: 'Email', type: 'email', required: true }, { label: 'Plan', type: 'text' }] }) });
  if (made.status !== 201) fail(`POST /v1/forms: ${made.status}`);
  await page.getByRole('link', { name: 'Workflows', exact: true }).click();
  await page.waitForURL('**/app/workflows');
  await check(page, 'workflows');
  await page.getByLabel('Show the workflows of').selectOption({ label: 'Contact' });
  await submit(page, page.getByRole('button', { name: 'New workflow for this form' }));
  await check(page, 'workflow-new');
  await page.getByLabel('Name').fill('Sales leads');
  await submit(page, page.getByRole('button', { name: 'Add condition' }));
  // The condition's question is picked by its label; templates name fields by key.
  await page.getByLabel('Question').selectOption({ label: 'Plan' });
  await page.getByLabel('Operator').selectOption({ label: 'is' });
  await page.locator('#c0-value').fill('pro');
  if (!(await page.locator('#keys-title + p + ul').innerText()).includes('{{plan}}')) fail('the template help does not list {{plan}}');
  if (!(await page.locator('#a0-title').innerText()).startsWith('1. ')) fail('actions are not numbered from 1');
  if (!(await page.locator('main').innerText()).includes('Email is not set up on this server')) fail('no SMTP warning on the email action');
  const fieldKey = 'plan';
  await page.locator('[name="a0.to"]').fill('sales@example.org');
  await page.locator('[name="a0.subject"]').fill(`New lead {{${fieldKey}}}`);
  await page.locator('[name="a0.body"]').fill(`Plan: {{${fieldKey}}}`);
  await page.getByLabel('Action to add').selectOption('send_webhook');
  await submit(page, page.getByRole('button', { name: 'Add action' }));
  if ((await page.locator('#c0-value').inputValue()) !== 'pro') fail('the condition was lost when adding an action');
  if ((await page.locator('#c0-field option:checked').innerText()) !== 'Plan') fail('the picked question was lost when adding an action');
  await page.locator('[name="a1.url"]').fill(receiverURL);
  await check(page, 'workflow-builder');
  await submit(page, page.getByRole('button', { name: 'Save workflow' }));
  if (!/\/app\/workflows\/wf/.test(page.url())) fail(`after saving the workflow: ${page.url()} ${(await page.locator('main').innerText()).slice(0, 400)}`);
  if ((await page.locator('[name="a0.subject"]').inputValue()) !== `New lead {{${fieldKey}}}`) fail('the template was not saved');
  ok('workflow saved with a condition and two actions');
  await check(page, 'workflow');
  await submit(page, page.getByRole('button', { name: 'Disable', exact: true }));
  await page.getByRole('link', { name: '← All workflows' }).click();
  await page.waitForURL('**/app/workflows');
  if (!(await page.locator('tbody').innerText()).includes('Disabled')) fail('the workflow is not shown disabled');
  ok('workflow disabled');
}

run(() => inBrowser(main));
