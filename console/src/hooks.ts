/** Data for pages: one request per view, cursor pages on demand, actions with their answer in words. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, Problem, type RequestOptions } from './api';
import { subscribe, type Topic } from './live';

export interface Loaded<T> {
  data: T | null;
  problem: Problem | null;
  loading: boolean;
  reload: () => void;
}

const asProblem = (e: unknown) =>
  e instanceof Problem ? e : new Problem(0, 'Something went wrong', e instanceof Error ? e.message : String(e));

/** GET `path` (null: nothing to get yet), again whenever `path` or the query changes, and on `reload`. */
export function useApi<T>(path: string | null, query: RequestOptions['query'] = {}, live: readonly Topic[] = []) {
  const key = path === null ? null : `${path}?${JSON.stringify(query)}`;
  const [state, setState] = useState<Omit<Loaded<T>, 'reload'>>({ data: null, problem: null, loading: !!path });
  const [round, setRound] = useState(0);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  useEffect(() => {
    if (path === null) return;
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    api<T>(path, { query }).then(
      (data) => current && setState({ data, problem: null, loading: false }),
      (e) => current && setState({ data: null, problem: asProblem(e), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [key, round]);
  useEffect(() => (live.length && path ? subscribe(live, reload) : undefined), [key, live.join()]);
  return { ...state, reload } as Loaded<T>;
}

interface PageInfo {
  has_next_page: boolean;
  next_cursor?: string | null;
}

export interface Paged<T> {
  items: T[];
  problem: Problem | null;
  loading: boolean;
  hasMore: boolean;
  more: () => void;
  refresh: () => void;
}

/**
 * A list read a page at a time with the API's cursors (never all at once). `refresh` (and a live
 * change) reads the first page again and keeps the later pages already shown.
 */
export function usePaged<T>(
  path: string | null,
  listKey: string,
  idOf: (item: T) => string,
  query: RequestOptions['query'] = {},
  live: readonly Topic[] = [],
): Paged<T> {
  const key = path === null ? null : `${path}?${JSON.stringify(query)}`;
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [loading, setLoading] = useState(!!path);
  const keyRef = useRef(key);
  keyRef.current = key;

  const load = useCallback(
    async (after: string | null, merge: (old: T[], page: T[]) => T[]) => {
      if (path === null) return;
      const asked = key;
      setLoading(true);
      try {
        const body = await api<Record<string, unknown>>(path, { query: { ...query, cursor: after } });
        if (keyRef.current !== asked) return;
        const page = (body[listKey] ?? []) as T[];
        const info = body.page_info as PageInfo | undefined;
        setItems((old) => merge(old, page));
        if (after !== null || cursor === null) setCursor(info?.has_next_page ? (info.next_cursor ?? null) : null);
        setProblem(null);
      } catch (e) {
        if (keyRef.current === asked) setProblem(asProblem(e));
      } finally {
        if (keyRef.current === asked) setLoading(false);
      }
    },
    [key, cursor],
  );

  useEffect(() => {
    setItems([]);
    setCursor(null);
    void load(null, (_old, page) => page);
  }, [key]);

  const refresh = useCallback(() => {
    void load(null, (old, page) => {
      const fresh = new Set(page.map(idOf));
      return [...page, ...old.slice(page.length).filter((i) => !fresh.has(idOf(i)))];
    });
  }, [load]);
  const refreshRef = useRef(refresh);
  refreshRef.current = refresh;
  useEffect(() => (live.length && path ? subscribe(live, () => refreshRef.current()) : undefined), [key]);

  const more = useCallback(() => {
    if (!cursor) return;
    void load(cursor, (old, page) => {
      const shown = new Set(old.map(idOf));
      return [...old, ...page.filter((i) => !shown.has(idOf(i)))];
    });
  }, [cursor, load]);
  return { items, problem, loading, hasMore: cursor !== null, more, refresh };
}

export interface ActionState {
  busy: boolean;
  message: string | null;
  problem: Problem | null;
}

/** Runs a request on demand and says what came of it: `said(result)` in words, or the problem. */
export function useAction<A extends unknown[], R>(run: (...args: A) => Promise<R>, said: (result: R) => string) {
  const [state, setState] = useState<ActionState>({ busy: false, message: null, problem: null });
  const act = async (...args: A): Promise<R | undefined> => {
    setState({ busy: true, message: null, problem: null });
    try {
      const result = await run(...args);
      setState({ busy: false, message: said(result), problem: null });
      return result;
    } catch (e) {
      setState({ busy: false, message: null, problem: asProblem(e) });
      return undefined;
    }
  };
  return [state, act] as const;
}
