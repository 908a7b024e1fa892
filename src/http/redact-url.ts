/**
 * A request's path as the log and problem documents show it: no query, and nothing that may be a
 * url_token webhook's token (`/webhooks/w/<uid>/<token>`), however the path is spelt. Matching
 * the ingress path as written let tokens through when a sender spelt it slightly otherwise
 * (`/api/v1/webhooks/w/…`, `//webhooks/w/…`, `/webhooks/W/…`, `%2F` for a slash), since those
 * miss the route and were logged, and answered, whole. So the path is read as a lenient server
 * or proxy might read it (escapes decoded, even twice; `\` as `/`; runs of slashes as one; any
 * case), and wherever a `webhooks/w/` appears in it, what follows is cut: all but a webhook uid
 * (a UUID) and the path's end.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The path up to its first `webhooks/w` (or `webhook/w`) segment pair, and what follows. */
const INGRESS = /^(.*?(?:^|\/)webhooks?\/w)(?:\/(.*))?$/is;
/** Enough for an escape escaped three times over (`%2525252F`): each round undoes one. */
const DECODING_ROUNDS = 4;

/** Every `%XX` as the byte it stands for (a Latin-1 character: the ingress path is ASCII), until none is left. */
function decoded(path: string): string {
  let text = path;
  for (let round = 0; round < DECODING_ROUNDS && /%[0-9a-f]{2}/i.test(text); round++)
    text = text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return text;
}

/** Neither an escape nor `webhook` in any case: nothing to decode, nothing an ingress path could hide in. */
const PLAIN = /^[^%]*$/;
const MENTIONS_INGRESS = /webhook/i;

export function redactUrl(url: string): string {
  const path = url.split(/[?#]/, 1)[0]!;
  // Every request's log line comes here: most paths are plain and cost two scans.
  if (PLAIN.test(path) && !MENTIONS_INGRESS.test(path)) return path;
  const read = decoded(path)
    .replace(/\\/g, '/')
    .replace(/\/{2,}/g, '/');
  const match = INGRESS.exec(read);
  if (!match) return path;
  const [uid = '', ...rest] = (match[2] ?? '').split('/');
  // A webhook's ingress path without a token (`/webhooks/w/<uid>`) is shown as it came.
  if ((uid === '' || UUID.test(uid)) && rest.every((s) => s === '')) return path;
  return `${match[1]}/${UUID.test(uid) ? uid : '[redacted]'}${rest.length ? '/[redacted]' : ''}`;
}
