/**
 * Per-key sliding one-minute windows, kept in this process (a multi-instance deployment gets one
 * budget per instance). Keys are webhook uids that exist, so the map stays small.
 */
export interface RateLimiter {
  /** Seconds to wait when the key has used its budget, else null. */
  exhausted(key: string, now: number): number | null;
  /** Counts one more use. */
  hit(key: string, now: number): void;
}

export function slidingWindow(limit: number, windowMs = 60_000): RateLimiter {
  const hits = new Map<string, number[]>();
  const recent = (key: string, now: number) => {
    const times = (hits.get(key) ?? []).filter((t) => t > now - windowMs);
    if (times.length) hits.set(key, times);
    else hits.delete(key);
    return times;
  };
  return {
    exhausted(key, now) {
      const times = recent(key, now);
      if (times.length < limit) return null;
      return Math.max(1, Math.ceil((times[times.length - limit]! + windowMs - now) / 1000));
    },
    hit(key, now) {
      const times = recent(key, now);
      times.push(now);
      hits.set(key, times.slice(-limit));
    },
  };
}
