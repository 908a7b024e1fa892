import { chromium } from 'playwright-core';
const base = process.argv[2] ?? 'http://127.0.0.1:18080';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
page.on('console', (m) => console.log('console:', m.type(), m.text()));
page.on('pageerror', (e) => console.log('pageerror:', e.message));
await page.goto(base + '/runs');
await page.getByLabel('API key').fill('sf_test_admin_key_0123456789abcdef');
await page.getByRole('button', { name: 'Sign in' }).click();
await page.getByRole('heading', { name: 'Runs' }).waitFor();
await page.waitForTimeout(1000);
await page.screenshot({ path: '/tmp/h35/runs.png', fullPage: true });
for (const p of (process.argv[3] ?? '').split(',').filter(Boolean)) {
  await page.goto(base + p);
  await page.waitForTimeout(1500);
  await page.screenshot({ path: `/tmp/h35/${p.replace(/[^a-z]/g, '_')}.png`, fullPage: true });
}
await browser.close();
