/** A page's frame and the state it keeps in its URL (so a reload or back and forward show the same). */
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import { useApi } from '../hooks';
import { Async, Empty } from './status';

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Shopfloor`;
  }, [title]);
  return (
    <>
      <h1>{title}</h1>
      {children}
    </>
  );
}

/** The page's query parameters, and a way to change some of them (a new history entry). */
export function useQuery(): [Record<string, string>, (patch: Record<string, string | null | undefined>) => void] {
  const { path, query, route } = useLocation();
  const set = (patch: Record<string, string | null | undefined>) => {
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...query, ...patch })) if (v) next.set(k, v);
    const qs = next.toString();
    route(`${path}${qs ? `?${qs}` : ''}`);
  };
  return [query, set];
}

export interface FactorySummary {
  uid: string;
  name: string;
  alias?: string;
  description?: string;
}

/** Picks one of the team's factories (the first hundred; kept in the URL as `factory`). */
export function FactoryPicker({ children }: { children: (factory: FactorySummary) => ComponentChildren }) {
  const [query, setQuery] = useQuery();
  const factories = useApi<{ factories: FactorySummary[] }>('/factory', { limit: 100 });
  return (
    <Async state={factories} what="Loading factories">
      {({ factories: list }) => {
        if (list.length === 0)
          return (
            <Empty>
              No factory yet. Create one on <a href="/factories">Factories</a>.
            </Empty>
          );
        const chosen = list.find((f) => f.uid === query.factory) ?? list[0]!;
        return (
          <>
            <label class="picker">
              Factory{' '}
              <select value={chosen.uid} onChange={(e) => setQuery({ factory: e.currentTarget.value })}>
                {list.map((f) => (
                  <option key={f.uid} value={f.uid}>
                    {f.name}
                  </option>
                ))}
              </select>
            </label>
            {children(chosen)}
          </>
        );
      }}
    </Async>
  );
}

/** A "Load more" button for cursor-paged lists. */
export function More({ hasMore, loading, more }: { hasMore: boolean; loading: boolean; more: () => void }) {
  if (!hasMore) return null;
  return (
    <button type="button" class="more" disabled={loading} onClick={more}>
      {loading ? 'Loading…' : 'Load more'}
    </button>
  );
}
