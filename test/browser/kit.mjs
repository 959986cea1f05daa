// kit.mjs: what the browser specs share: their arguments, the browser, axe-core at desktop
// width, at 375 px and in dark mode with screenshots, form posts that navigate, the first-run
// setup and calls to the API.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const owner = { name: 'Ada Lovelace', email: 'ada@example.org', password: 'analytical-engine-1843', workspace: 'Acme Research' };
export const desktop = { width: 1280, height: 900 };
export const phone = { width: 375, height: 812 };

export function fail(msg) {
  throw new Error(msg);
}
export function ok(msg) {
  console.log('ok: ' + msg);
}

// commandLine reads the spec's command line, one value for each name; without them all it
// prints the usage and exits 2.
export function commandLine(script, ...names) {
  const values = process.argv.slice(2);
  if (values.length < names.length || values.some((v) => !v)) {
    console.error(`usage: node ${script} ${names.map((n) => `<${n}>`).join(' ')}`);
    process.exit(2);
  }
  return values;
}

// args reads a dashboard spec's command line: <base url> <setup link> <artifact dir>, then extra
// names.
export function args(script, ...extra) {
  return commandLine(script, 'base url', 'setup link', 'artifact dir', ...extra);
}

// launch starts headless Chromium (FORMWARD_CHROMIUM, default /usr/bin/chromium).
export function launch() {
  return chromium.launch({
    executablePath: process.env.FORMWARD_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// inBrowser launches Chromium, opens a context at desktop width (plus contextOptions) and a page
// in it (20 s per step, its script errors collected), and runs main({ browser, ctx, page, watch }),
// where watch(other) collects another page's script errors too. A script error in any watched
// page fails the spec once main is done; the browser is closed in every case.
export async function inBrowser(main, contextOptions = {}) {
  const browser = await launch();
  const errors = [];
  const watch = (page) => page.on('pageerror', (e) => errors.push(String(e)));
  try {
    const ctx = await browser.newContext({ viewport: desktop, ...contextOptions });
    const page = await ctx.newPage();
    page.setDefaultTimeout(20000);
    watch(page);
    await main({ browser, ctx, page, watch });
    if (errors.length) fail(`errors in the page: ${errors.join(' | ')}`);
  } finally {
    await browser.close();
  }
}

// axe runs axe-core on the page and fails on any violation; iframes: false leaves frames out
// (a spec checks them on their own page).
export async function axe(page, what, { iframes = true } = {}) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async (iframes) => {
    const r = await window.axe.run(document, { resultTypes: ['violations'], iframes });
    return {
      version: window.axe.version,
      violations: r.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(' | ')}`),
    };
  }, iframes);
  if (result.violations.length) fail(`axe-core on ${what}: ${result.violations.join('; ')}`);
  return result.version;
}

// expectNoAxeViolations runs axe (above) and says the page passed.
export async function expectNoAxeViolations(page, what, options) {
  const version = await axe(page, what, options);
  ok(`axe-core ${version} on ${what}: 0 violations`);
}

// checker returns check and checkDark for screenshots named <prefix>-<page>[-375|-dark].png in
// artifactDir, and the list of files they wrote.
export function checker(artifactDir, prefix, { iframes = true } = {}) {
  fs.mkdirSync(artifactDir, { recursive: true });
  const shots = [];
  const shot = async (page, name) => {
    const file = path.resolve(artifactDir, `${prefix}-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    shots.push(file);
  };
  return {
    shots,
    // check runs axe-core and takes a screenshot at the page's width and at 375 px, and checks
    // the page does not scroll sideways on a phone.
    async check(page, name) {
      const version = await axe(page, `${name} (desktop)`, { iframes });
      await shot(page, name);
      const size = page.viewportSize();
      await page.setViewportSize(phone);
      await axe(page, `${name} (375 px)`, { iframes });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      if (overflow > 1) fail(`${name}: at 375 px the page scrolls sideways by ${overflow} px`);
      await shot(page, `${name}-375`);
      await page.setViewportSize(size);
      ok(`axe-core ${version} on ${name}: 0 violations at desktop and 375 px`);
    },
    // checkDark repeats the check in the dark colour scheme (prefers-color-scheme: dark).
    async checkDark(page, name) {
      await page.emulateMedia({ colorScheme: 'dark' });
      const version = await axe(page, `${name} (dark)`, { iframes });
      await shot(page, `${name}-dark`);
      await page.emulateMedia({ colorScheme: 'light' });
      ok(`axe-core ${version} on ${name} in dark mode: 0 violations`);
    },
  };
}

// submit clicks target (a locator, or a function that acts) and waits for the navigation.
export async function submit(page, target) {
  const act = typeof target === 'function' ? target : () => target.click();
  const [resp] = await Promise.all([page.waitForNavigation(), act()]);
  return resp;
}

// save does what changes a form in the builder and waits for the builder's script to have
// saved it in the background and drawn the answer (it counts saves in data-fb-saved on
// <html>); it returns the answer's status.
export async function save(page, act) {
  const before = await page.evaluate(() => Number(document.documentElement.getAttribute('data-fb-saved') || '0'));
  await act();
  await page.waitForFunction((n) => Number(document.documentElement.getAttribute('data-fb-saved') || '0') > n, before);
  return page.evaluate(() => Number(document.documentElement.getAttribute('data-fb-status')));
}

// setUp creates the first account from the setup link the server logged and lands on /app/forms.
export async function setUp(page, setupURL, who = owner) {
  const resp = await page.goto(setupURL, { waitUntil: 'load' });
  if (resp.status() !== 200) fail(`setup page: ${resp.status()}`);
  await page.getByLabel('Your name').fill(who.name);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByLabel('Workspace name').fill(who.workspace);
  await submit(page, page.getByRole('button', { name: 'Create account' }));
  if (!page.url().endsWith('/app/forms')) fail(`after setup the browser is at ${page.url()}`);
}

// createKey creates an API key on the API keys page as a signed-in owner would, and returns
// the full key the page shows once.
export async function createKey(page, baseURL, name, scope = 'read-write') {
  await page.goto(baseURL + '/app/settings/api-keys');
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Scope').selectOption(scope);
  await submit(page, page.getByRole('button', { name: 'Create key' }));
  return (await page.locator('#new-key').innerText()).trim();
}

// api calls the REST API with a key and returns the status and the decoded body.
export async function api(baseURL, method, url, key, body) {
  const headers = { Authorization: `Bearer ${key}` };
  if (body) headers['Content-Type'] = 'application/json';
  const resp = await fetch(baseURL + url, { method, headers, body: body && JSON.stringify(body) });
  const text = await resp.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: resp.status, json, text };
}

// run runs the spec's main: exit 0, or "FAIL: ..." and exit 1.
export function run(main) {
  main().then(
    () => process.exit(0),
    (e) => {
      console.log('FAIL: ' + (e && e.message ? e.message : e));
      process.exit(1);
    },
  );
}

// axeAsServed runs axe-core on a page as a visitor with JavaScript (js) sees it, or, without
// JavaScript (where nothing can be evaluated in the page), on the page as the server sent it
// (resp), copied into a page of axeContext without its own script so the DOM stays as drawn.
export async function axeAsServed(axeContext, page, resp, js, what) {
  if (js || !resp) return expectNoAxeViolations(page, what);
  const html = (await resp.text()).replace(/<script[^>]*><\/script>/g, '');
  const url = page.url();
  const copy = await axeContext.newPage();
  try {
    await copy.route(url, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }));
    await copy.goto(url, { waitUntil: 'load' });
    await expectNoAxeViolations(copy, what);
  } finally {
    await copy.close();
  }
}
