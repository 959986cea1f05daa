// Browser test of the dashboard, run by test/browser_test.go's neighbour
// test/dashboard_browser_test.go (TestBrowserDashboard):
//
//   node test/browser/dashboard.spec.mjs <base url> <setup link> <artifact dir>
//
// The first owner walks the product: first-run setup from the link the server logged; sign
// out, a wrong password (one message), sign in; an API key created, used against /v1/forms,
// revoked and then refused with 401; a member invited and the invitation accepted in a second
// browser context; that member's role changed; the plan changed; the workspace cancelled (the
// deletion date shown) and reactivated; the audit log with those events as sentences, filtered by
// action and by person;
// two-step verification turned on (a code computed here) and used at sign-in with a recovery
// code; the member refused a page, removed, and shown the "no workspace" page; the reset request.
// axe-core runs on every page at desktop width and at 375 px (and on five in the dark colour
// scheme): zero violations. Screenshots: <artifact dir>/dashboard-<page>.png,
// dashboard-<page>-375.png and dashboard-<page>-dark.png.
// It prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import crypto from 'node:crypto';
import { api as callAPI, args, checker, desktop, fail, inBrowser, ok, owner, run, submit } from './kit.mjs';

const [baseURL, setupURL, artifactDir] = args('dashboard.spec.mjs');
const { check, checkDark, shots } = checker(artifactDir, 'dashboard');
const api = async (method, url, key, body) => (await callAPI(baseURL, method, url, key, body)).status;

const member = { name: 'Grace Hopper', email: 'grace@example.org', password: 'compiler-cobol-1959' };

async function expectFlash(page, re, what) {
  const text = (await page.locator('[role=status]').first().innerText()).trim();
  if (!re.test(text)) fail(`${what}: notice says "${text}"`);
}

// totp is the RFC 6238 code (SHA-1, 30 s, 6 digits) of a base32 secret, as an authenticator app shows it.
function totp(secret, at = Date.now()) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of secret.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30000)));
  const mac = crypto.createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1000000).padStart(6, '0');
}

async function main({ browser, ctx, page, watch }) {
  // 1. First-run setup from the logged link.
  let resp = await page.goto(setupURL, { waitUntil: 'load' });
  if (resp.status() !== 200) fail(`setup page: ${resp.status()}`);
  await check(page, 'setup');
  await page.getByLabel('Your name').fill(owner.name);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByLabel('Workspace name').fill(owner.workspace);
  resp = await submit(page, page.getByRole('button', { name: 'Create account' }));
  if (!page.url().endsWith('/app/forms')) fail(`after setup the browser is at ${page.url()}: ${(await page.locator('main').innerText()).slice(0, 300)}`);
  ok('first-run setup created the owner and signed in');
  await check(page, 'forms');

  // Keyboard: the first Tab reaches the skip link, which moves focus to the content.
  await page.keyboard.press('Tab');
  if ((await page.evaluate(() => document.activeElement?.className)) !== 'skip-link') fail('the first Tab does not reach the skip link');
  await page.keyboard.press('Enter');
  if ((await page.evaluate(() => document.activeElement?.id)) !== 'main') fail('the skip link does not move focus to the content');
  ok('skip link works from the keyboard');

  // 2. Sign out, a wrong password, sign in.
  await page.locator('details.user-menu summary').click();
  await submit(page, page.getByRole('button', { name: 'Sign out', exact: true }));
  if (!page.url().includes('/app/login')) fail(`after sign-out: ${page.url()}`);
  await check(page, 'login');
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill('not-the-password-at-all');
  resp = await submit(page, page.getByRole('button', { name: 'Sign in' }));
  if (resp.status() !== 401) fail(`wrong password: status ${resp.status()}`);
  const wrong = (await page.locator('[role=alert]').innerText()).trim();
  await check(page, 'login-error');
  await checkDark(page, 'login-error');
  await page.getByLabel('Email').fill('nobody@example.org');
  await page.getByLabel('Password').fill('not-the-password-at-all');
  await submit(page, page.getByRole('button', { name: 'Sign in' }));
  const unknown = (await page.locator('[role=alert]').innerText()).trim();
  if (wrong !== unknown) fail(`unknown email says "${unknown}", wrong password "${wrong}"`);
  ok(`wrong password and unknown email get one message: "${wrong}"`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await submit(page, page.getByRole('button', { name: 'Sign in' }));
  if (!page.url().endsWith('/app/forms')) fail(`after sign-in: ${page.url()}`);
  ok('signed in');

  // 3. An API key: created, shown once, used, revoked, refused.
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.waitForURL('**/app/settings/api-keys');
  if ((await page.getByRole('link', { name: 'API keys' }).getAttribute('aria-current')) !== 'page') fail('the nav does not mark the current page');
  await check(page, 'api-keys');
  await page.getByLabel('Name').fill('CI pipeline');
  await page.getByLabel('Scope').selectOption('read-write');
  resp = await submit(page, page.getByRole('button', { name: 'Create key' }));
  if (!/no-store/.test(resp.headers()['cache-control'] || '')) fail(`the page with the new key is cacheable: ${resp.headers()['cache-control']}`);
  const key = (await page.locator('#new-key').innerText()).trim();
  if (!/^fwk_/.test(key) && key.length < 20) fail(`no key shown: "${key}"`);
  await check(page, 'api-key-created');
  // The post answered 303: a reload repeats the GET, which shows the key no more.
  if (!/\/app\/settings\/api-keys\?shown=/.test(page.url())) fail(`after creating a key the browser is at ${page.url()}`);
  await page.reload();
  let main = await page.locator('main').innerText();
  if (main.includes(key) || !/shown once/i.test(main)) fail(`a reload after creating a key: ${main}`);
  if ((await page.getByRole('link', { name: 'Revoke CI pipeline' }).count()) !== 1) fail('a reload made a second key');
  await check(page, 'api-key-shown-once');
  await checkDark(page, 'api-key-shown-once');
  ok('a reload shows the new key no more and makes none');
  let status = await api('GET', '/v1/forms', key);
  if (status !== 200) fail(`GET /v1/forms with the new key: ${status}`);
  ok('the new key works against /v1/forms (200)');
  status = await api('POST', '/v1/forms', key, { name: 'Customer feedback', fields: [{ label: 'Email', type: 'email', required: true }] });
  if (status !== 201) fail(`POST /v1/forms with the new key: ${status}`);
  await page.goto(baseURL + '/app/forms');
  const row = await page.locator('tbody tr').first().innerText();
  if (!row.includes('Customer feedback') || !row.includes('draft') || !/\b0\b/.test(row)) fail(`the forms list: ${row}`);
  await check(page, 'forms-list');
  await checkDark(page, 'forms-list');
  ok('the form created through the API is listed with its status and submission count');
  await page.goto(baseURL + '/app/settings/api-keys');
  if ((await page.locator('main').innerText()).includes(key)) fail('the full key is shown again');
  await page.getByRole('link', { name: 'Revoke CI pipeline' }).click();
  await page.waitForURL('**/revoke');
  await check(page, 'api-key-revoke');
  await submit(page, page.getByRole('button', { name: 'Revoke key' }));
  await expectFlash(page, /revoked/i, 'revoke');
  status = await api('GET', '/v1/forms', key);
  if (status !== 401) fail(`GET /v1/forms with the revoked key: ${status}, want 401`);
  ok('the revoked key is refused (401)');

  // 4. Invite a member; accept in a second browser.
  await page.getByRole('link', { name: 'Members' }).click();
  await page.waitForURL('**/app/settings/members');
  await check(page, 'members');
  await page.getByLabel('Email').fill(member.email);
  await page.locator('#invite-role').selectOption('editor');
  resp = await submit(page, page.getByRole('button', { name: 'Send invitation' }));
  if (!/no-store/.test(resp.headers()['cache-control'] || '')) fail('the page with the accept link is cacheable');
  const acceptURL = (await page.locator('#accept-link').innerText()).trim();
  if (!acceptURL.includes('/app/invitations/')) fail(`no accept link: "${acceptURL}"`);
  await check(page, 'members-invited');
  await page.reload();
  main = await page.locator('main').innerText();
  if (main.includes(acceptURL) || !/shown once/i.test(main)) fail(`a reload after inviting: ${main}`);
  if ((await page.getByRole('button', { name: `Withdraw invitation of ${member.email}` }).count()) !== 1) fail('a reload made a second invitation');
  ok('invitation created; the accept link is shown once');

  const ctx2 = await browser.newContext({ viewport: desktop });
  const page2 = await ctx2.newPage();
  page2.setDefaultTimeout(20000);
  watch(page2);
  resp = await page2.goto(acceptURL.replace(/^https?:\/\/[^/]+/, baseURL));
  if (resp.status() !== 200) fail(`accept page: ${resp.status()}`);
  const invite = await page2.locator('main').innerText();
  if (!invite.includes(owner.workspace) || !/editor/i.test(invite)) fail(`the accept page does not show workspace and role: ${invite.slice(0, 300)}`);
  await check(page2, 'invitation');
  await page2.getByLabel('Your name').fill(member.name);
  await page2.getByLabel('Choose a password').fill(member.password);
  await submit(page2, page2.getByRole('button', { name: 'Create account and join' }));
  if (!page2.url().endsWith('/app/forms')) fail(`after accepting: ${page2.url()} ${(await page2.locator('main').innerText()).slice(0, 300)}`);
  if ((await page2.getByRole('link', { name: 'API keys' }).count()) !== 0) fail('an editor sees the API keys link');
  ok('the member accepted in a second browser and sees no account settings');
  await check(page2, 'forms-editor');

  // 5. Change the member's role.
  await page.goto(baseURL + '/app/settings/members');
  await page.getByLabel(`Role of ${member.name}`).selectOption('viewer');
  await submit(page, page.getByRole('button', { name: `Save role of ${member.name}` }));
  await expectFlash(page, /role changed/i, 'role change');
  if ((await page.getByLabel(`Role of ${member.name}`).inputValue()) !== 'viewer') fail('the role did not change');
  ok('member role changed to viewer');
  await page2.goto(baseURL + '/app/settings/profile');
  if (!/viewer/i.test(await page2.locator('.user-menu').textContent())) fail('the member does not see the new role');
  await check(page2, 'profile');

  // 6. Billing: change the plan; cancel (deletion date shown) and reactivate.
  await page.getByRole('link', { name: 'Billing' }).click();
  await page.waitForURL('**/app/settings/billing');
  await check(page, 'billing');
  await checkDark(page, 'billing');
  await page.getByLabel('Change plan').selectOption('growth');
  await submit(page, page.getByRole('button', { name: 'Change plan' }));
  await expectFlash(page, /growth/i, 'plan change');
  ok('plan changed to Growth');
  await page.getByRole('link', { name: 'Cancel workspace…' }).click();
  await page.waitForURL('**/billing/cancel');
  await check(page, 'billing-cancel');
  await submit(page, page.getByRole('button', { name: 'Cancel workspace' }));
  const cancelled = await page.locator('main').innerText();
  if (!/will be deleted on/i.test(cancelled)) fail(`no deletion date after cancelling: ${cancelled.slice(0, 400)}`);
  await check(page, 'billing-cancelled');
  await submit(page, page.getByRole('button', { name: 'Reactivate workspace' }));
  await expectFlash(page, /active again/i, 'reactivate');
  ok('cancelled with the deletion date shown, then reactivated');

  // 7. The audit log shows all of it, newest first; the filter narrows it.
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.waitForURL('**/app/settings/audit-log');
  const log = await page.locator('main').innerText();
  for (const action of ['api_key.created', 'api_key.revoked', 'member.invited', 'member.role_changed', 'workspace.updated', 'user.signed_in']) {
    if (!log.includes(action)) fail(`the audit log lacks ${action}`);
  }
  await check(page, 'audit-log');
  await page.getByLabel('Action').selectOption('member.role_changed');
  await submit(page, page.getByRole('button', { name: 'Filter' }));
  const rows = await page.locator('tbody tr').allInnerTexts();
  if (rows.length < 1 || rows.some((r) => !r.includes('member.role_changed'))) fail(`filter by action: ${rows.join(' | ')}`);
  // Each event reads as a sentence naming who did it; the person filter keeps one actor's.
  if (!log.includes('CI pipeline created the form Customer feedback')) fail(`no sentence for the form made through the API: ${log.slice(0, 600)}`);
  await page.getByLabel('Action').selectOption('');
  const person = page.getByLabel('Person');
  const keyID = await person.locator('option', { hasText: 'API key CI pipeline' }).getAttribute('value');
  await person.selectOption(keyID);
  await submit(page, page.getByRole('button', { name: 'Filter' }));
  const keyRows = await page.locator('tbody tr').allInnerTexts();
  if (keyRows.length < 1 || keyRows.some((r) => !r.includes('CI pipeline'))) fail(`filter by person: ${keyRows.join(' | ')}`);
  if ((await person.inputValue()) !== keyID) fail('the person filter does not keep its choice');
  await check(page, 'audit-log-person');
  await checkDark(page, 'audit-log-person');
  ok('audit log lists the events as sentences and filters by action and by person');

  // 8. Profile: two-step verification setup shows a QR code and the secret.
  await page.goto(baseURL + '/app/settings/profile');
  await check(page, 'profile-owner');
  resp = await submit(page, page.getByRole('button', { name: 'Set up two-step verification' }));
  if (!/no-store/.test(resp.headers()['cache-control'] || '')) fail('the two-factor secret page is cacheable');
  if ((await page.locator('img.qr').count()) !== 1) fail('no QR code');
  await check(page, 'two-factor-setup');
  ok('two-step verification setup shows the QR code and the secret');
  const secret = (await page.locator('#totp-secret').innerText()).trim();
  await page.getByLabel('Authentication code').fill(totp(secret));
  resp = await submit(page, page.getByRole('button', { name: 'Turn on' }));
  if (!/no-store/.test(resp.headers()['cache-control'] || '')) fail('the recovery codes page is cacheable');
  const codes = await page.locator('#recovery-codes li').allInnerTexts();
  if (codes.length !== 10) fail(`${codes.length} recovery codes shown`);
  await check(page, 'recovery-codes');
  await page.reload();
  main = await page.locator('main').innerText();
  if (main.includes(codes[0]) || !/shown once/i.test(main)) fail(`a reload after turning two-step verification on: ${main}`);
  ok('two-step verification is on; 10 recovery codes shown once');

  // Sign-in now asks for a code; a recovery code works.
  await page.locator('details.user-menu summary').click();
  await submit(page, page.getByRole('button', { name: 'Sign out', exact: true }));
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await submit(page, page.getByRole('button', { name: 'Sign in' }));
  await check(page, 'login-two-factor');
  await page.getByLabel('Authentication code').fill(codes[0]);
  await submit(page, page.getByRole('button', { name: 'Verify and sign in' }));
  if (!page.url().endsWith('/app/forms')) fail(`after the recovery code: ${page.url()}`);
  ok('signed in with a recovery code at the two-step verification');

  // The member, now a viewer, is refused the billing page (a friendly 403 page).
  resp = await page2.goto(baseURL + '/app/settings/billing');
  if (resp.status() !== 403) fail(`a viewer on billing: ${resp.status()}`);
  await check(page2, 'forbidden');

  // Remove the member after a confirmation; signing in again they see the "no workspace" page.
  await page.goto(baseURL + '/app/settings/members');
  await page.getByRole('link', { name: `Remove ${member.name}` }).click();
  await page.waitForURL('**/remove');
  await check(page, 'member-remove');
  await submit(page, page.getByRole('button', { name: 'Remove member' }));
  await expectFlash(page, /removed/i, 'remove member');
  await page2.goto(baseURL + '/app/forms');
  if (!page2.url().includes('/app/login')) fail(`a removed member's session still works: ${page2.url()}`);
  await page2.getByLabel('Email').fill(member.email);
  await page2.getByLabel('Password').fill(member.password);
  await submit(page2, page2.getByRole('button', { name: 'Sign in' }));
  if (!page2.url().endsWith('/app/no-workspace')) fail(`a person without a workspace lands on ${page2.url()}`);
  await check(page2, 'no-workspace');
  ok('the removed member is signed out, then sees the "no workspace" page');

  // Signed-out pages: password reset request.
  const ctx3 = await browser.newContext({ viewport: desktop });
  const page3 = await ctx3.newPage();
  await page3.goto(baseURL + '/app/forgot-password');
  await check(page3, 'forgot-password');
  await page3.getByLabel('Email').fill('nobody@example.org');
  await submit(page3, page3.getByRole('button', { name: 'Send reset link' }));
  if (!/if an account exists/i.test(await page3.locator('main').innerText())) fail('the reset request does not answer alike');
  await check(page3, 'forgot-password-sent');
  await ctx3.close();

  await ctx2.close();
  await ctx.close();
  ok(`screenshots: ${shots.length} files in ${artifactDir}`);
}

run(() => inBrowser(main));
