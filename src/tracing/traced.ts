/** Spans around the runtime's work: a command (decide and append), a reactor's reaction. */
import type { NewEvent, RecordedEvent } from '../eventstore/port.js';
import type { AnyReactor } from '../projector/reactor.js';
import type { Tracing } from './tracing.js';
import { own } from '../own-keys.js';

/** Whatever a command or an event says about the run, task and factory it concerns. */
function subjectOf(data: object | undefined): Record<string, string | undefined> {
  const d = (data ?? {}) as Record<string, unknown>;
  const text = (k: string) => {
    const value = own(d, k);
    return typeof value === 'string' ? value : undefined;
  };
  return {
    'shopfloor.run.id': text('run_id'),
    'shopfloor.task.uid': text('task_uid') ?? text('task_id'),
    'shopfloor.factory.uid': text('factory_uid'),
  };
}

/** A command's span: its stream and what it decided, with the run, task and factory it names. */
export function tracedCommand<R extends { events: NewEvent[] }>(
  tracing: Tracing,
  stream: string,
  command: unknown,
  handle: () => Promise<R>,
): Promise<R> {
  if (!tracing.enabled) return handle();
  const c = command as { type?: string; data?: object };
  const attributes = { 'shopfloor.stream': stream, 'shopfloor.command': c.type, ...subjectOf(c.data) };
  return tracing.inSpan(`command ${c.type ?? stream.split('-')[0]}`, attributes, async (span) => {
    const handled = await handle();
    span.setAttribute('shopfloor.events', handled.events.map((e) => e.type).join(','));
    return handled;
  });
}

/** The reactor with each reaction in a span of its own. */
export function tracedReactor<Deps>(r: AnyReactor<Deps>, tracing: Tracing): AnyReactor<Deps> {
  if (!tracing.enabled) return r;
  const on = Object.fromEntries(
    Object.entries(r.on).map(([type, react]) => [
      type,
      (event: RecordedEvent, deps: Deps) =>
        tracing.inSpan(
          `react ${r.name} ${type}`,
          {
            'shopfloor.reactor': r.name,
            'shopfloor.event.id': event.id,
            'shopfloor.stream': event.stream,
            ...subjectOf(event.data),
          },
          () => (react as (e: RecordedEvent, d: Deps) => Promise<void>)(event, deps),
        ),
    ]),
  );
  return { ...r, on };
}
