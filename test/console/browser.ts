/**
 * Headless Chromium for the console's browser tests (playwright-core driving the system's
 * Chromium, Debian's `chromium` package): where it is, how it is launched, signing in, the
 * accessibility scan (axe-core) and the screenshots.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];

/** The Chromium to drive: CHROMIUM_PATH, else the first one installed where Debian and Google put it. */
export function findChromium(): string | null {
  const given = process.env.CHROMIUM_PATH;
  if (given) return fs.existsSync(given) ? given : null;
  return CANDIDATES.find((c) => fs.existsSync(c)) ?? null;
}

/** No background traffic: this machine reaches nothing but localhost. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const launch = (executablePath: string): Promise<Browser> => chromium.launch({ executablePath, args: ARGS });

/**
 * A browser context whose every request is noted; `foreign()` lists those that went anywhere
 * but `origin` (the console must fetch nothing from elsewhere).
 */
export async function consoleContext(browser: Browser, origin: string, width = 1280) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: 'light' });
  const requested: string[] = [];
  const refusedByPolicy: string[] = [];
  context.on('request', (r) => requested.push(r.url()));
  context.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) refusedByPolicy.push(m.text());
  });
  return {
    context,
    foreign: () => requested.filter((u) => !u.startsWith(`${origin}/`) && !/^(data|blob):/.test(u)),
    /** What the page tried that its Content-Security-Policy refused (inline script or style, other origins). */
    refusedByPolicy: () => refusedByPolicy,
    /** The API requests made so far, oldest first. */
    apiRequests: () => requested.filter((u) => u.startsWith(`${origin}/api/`)),
  };
}

/** Signs in on the console's sign-in form, as a person would. */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/runs`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

/** The session cookie the context holds (for checking, outside the browser, what the server says of it). */
export async function sessionCookie(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === 'shopfloor_session');
  if (!cookie) throw new Error('no session cookie');
  return `${cookie.name}=${cookie.value}`;
}

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown }>;
}

/** The serious and critical accessibility violations axe-core finds on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = (await page.evaluate(
    // @ts-expect-error axe is the global the script above defines
    async () => (await axe.run(document, { resultTypes: ['violations'] })).violations,
  )) as Violation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

/**
 * Screenshots of every page go to CONSOLE_SCREENSHOTS (`npm run console:screenshots` writes the
 * docs' copies, docs/screenshots), else to a directory the tests leave in the temporary folder.
 */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS ?? path.join(os.tmpdir(), 'shopfloor-console-screenshots');

/** A whole page, or one part of it (a locator: a section). */
export async function screenshot(target: Page | Locator, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await ('goto' in target ? target.screenshot({ path: file, fullPage: true }) : target.screenshot({ path: file }));
}
