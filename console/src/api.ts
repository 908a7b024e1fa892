/**
 * The console's only way to the server: the public API under /api/v1, authenticated by the
 * session cookie (the browser sends it; the key itself never reaches this code after sign-in).
 * Every request carries the console header (the server's guard against cross-site requests) and
 * the active team. A problem answer becomes a `Problem` to show as its title and detail.
 */

/** The header the server requires on unsafe requests authenticated by the session cookie. */
const CONSOLE_HEADER = { 'x-shopfloor-console': '1' };

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly code = '',
    readonly errors: Array<{ path: string; message: string }> = [],
  ) {
    super(`${title}: ${detail}`);
  }
}

type Query = Record<string, string | number | boolean | undefined | null>;

let activeTeam: string | null = null;
const signedOutListeners = new Set<() => void>();

export const setActiveTeam = (team: string | null) => {
  activeTeam = team;
};

/** Called when the server says the session is over (401), wherever the request came from. */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/** `/api/v1` + path + the query's set values. */
export function apiUrl(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return `/api/v1${path}${qs ? `?${qs}` : ''}`;
}

async function problemOf(res: Response): Promise<Problem> {
  const body = (await res.json().catch(() => null)) as Partial<Problem> | null;
  return new Problem(
    res.status,
    body?.title ?? res.statusText ?? 'Request failed',
    body?.detail ?? `The server answered ${res.status}`,
    body?.code ?? '',
    body?.errors ?? [],
  );
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Query;
  accept?: string;
}

/** One request; the raw Response when it succeeded, else a thrown Problem. */
async function request(path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...CONSOLE_HEADER, accept: options.accept ?? 'application/json' };
  if (activeTeam) headers['x-service-team-uid'] = activeTeam;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(apiUrl(path, options.query), {
      method: options.method ?? 'GET',
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new Problem(0, 'Network error', 'The server could not be reached. Check your connection and try again.');
  }
  if (res.ok) return res;
  const problem = await problemOf(res);
  if (res.status === 401 && path !== '/session') for (const l of signedOutListeners) l();
  throw problem;
}

/** A JSON request; null for an answer without a body (204). */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const res = await request(path, options);
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as T;
}
