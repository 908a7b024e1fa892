/** Times, money and JSON as people read them. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A moment in the reader's time zone, its ISO form in `datetime` (and shown on hover). */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={iso}>
      {dateTime.format(new Date(iso))}
    </time>
  );
}

/** A moment in a named time zone (a schedule's own). */
export function zoned(iso: string, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(
      new Date(iso),
    );
  } catch {
    return dateTime.format(new Date(iso));
  }
}

export const usd = (n: number | null | undefined) =>
  n === null || n === undefined
    ? '—'
    : `$${n.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;

/** JSON in a scrolling box, focusable so that keyboard users can scroll it too. */
export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (WCAG 2.1.1)
    <section class="json" aria-label={label} tabIndex={0}>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </section>
  );
}

/** A run or task state as a badge (colour and word). */
export function State({ state }: { state: string }) {
  return <span class={`badge state-${state.toLowerCase()}`}>{state}</span>;
}
