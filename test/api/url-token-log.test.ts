/**
 * A url_token webhook's token never reaches the process log, nor the problem a stray request gets
 * back, however the sender spells the path (issue #30): the redaction matched
 * `/webhooks/w/<uid>/<token>` exactly, so `/api/v1/webhooks/w/…`, `//webhooks/w/…`,
 * `/webhooks/W/…` and an encoded `%2F` (each a 404, logged and answered whole) let it through.
 * The server's real logger is read, at its most talkative level, for each spelling.
 */
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});
const t = await startTestApp({ LOG_LEVEL: 'trace' }, undefined, [], sink);
afterAll(() => t.close());

const factory = (await t.call('POST', '/factory', { name: 'F' })).json().uid as string;
const hook = (await t.call('POST', `/factory/${factory}/webhooks`, { name: 'u', authMode: 'url_token' })).json() as {
  uid: string;
  secret: string;
};
const token = hook.secret;

const SPELLINGS: Record<string, string> = {
  'as documented': `/webhooks/w/${hook.uid}/${token}`,
  'under /api/v1': `/api/v1/webhooks/w/${hook.uid}/${token}`,
  'with a leading //': `//webhooks/w/${hook.uid}/${token}`,
  'with a capital W': `/webhooks/W/${hook.uid}/${token}`,
  'in capitals': `/WEBHOOKS/W/${hook.uid}/${token}`,
  'with %2F for the last slash': `/webhooks/w/${hook.uid}%2F${token}`,
  'with %2f for every slash': `/webhooks%2fw%2f${hook.uid}%2f${token}`,
  'with %252F (escaped twice)': `/webhooks/w/${hook.uid}%252F${token}`,
  'with a doubled slash inside': `/webhooks/w//${hook.uid}/${token}`,
  'with backslashes': `/webhooks\\w\\${hook.uid}\\${token}`,
  'with a segment after the token': `/webhooks/w/${hook.uid}/${token}/extra`,
  'with the token in place of the uid': `/webhooks/w/${token}`,
  'with a query': `/webhooks/w/${hook.uid}/${token}?x=${token}`,
  'with a malformed escape after the token': `/webhooks/w/${hook.uid}/${token}%zz`,
  'with a path parameter past its length': `/webhooks/w/${hook.uid}/${token}${'x'.repeat(1000)}`,
};

describe('a url_token in the path', () => {
  it.each(Object.entries(SPELLINGS))('%s: is in no log line and not in the answer', async (_name, url) => {
    const from = lines.length;
    const res = await t.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    const logged = lines.slice(from);
    // The request's own line was written, with its path cut after the uid.
    const line = logged.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
    expect(line, logged.join('\n')).toMatchObject({ method: 'POST', status: res.statusCode });
    expect(line.url).toMatch(/\[redacted\]$/);
    for (const l of logged) expect(l).not.toContain(token);
    expect(res.body).not.toContain(token);
    if (res.statusCode >= 400) expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('leaves every other path as it came', async () => {
    const from = lines.length;
    await t.app.inject({ method: 'GET', url: `/api/v1/factory/${factory}/webhooks/${hook.uid}?x=1` });
    await t.app.inject({ method: 'POST', url: `/webhooks/w/${hook.uid}`, payload: '{}' });
    const urls = lines
      .slice(from)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'request')
      .map((l) => l.url);
    expect(urls).toEqual([`/api/v1/factory/${factory}/webhooks/${hook.uid}`, `/webhooks/w/${hook.uid}`]);
  });
});
