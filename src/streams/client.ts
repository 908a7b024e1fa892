/**
 * A client of the event streams for the `shopfloor` command: an EventSource (the `eventsource`
 * package) that reconnects with Last-Event-ID as browsers do, until the server ends the stream for
 * good (a 204, as a run stream whose tree ended answers) or refuses it (401, 403, 404: said once).
 */
import { EventSource } from 'eventsource';

export interface StreamedEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

export interface FollowOptions {
  url: string;
  apiKey: string;
  /** Event types to listen for (an EventSource hears named events only when asked). */
  types: readonly string[];
  /** The active team, sent as X-Service-Team-Uid. */
  team?: string;
  onEvent(e: StreamedEvent): void;
}

/** Follows a stream; resolves once the server ended it for good (refused: null), or with the status it was refused with (0: unreachable). */
export function follow(o: FollowOptions): Promise<{ refused: number | null; message: string | null }> {
  return new Promise((resolve) => {
    const source = new EventSource(o.url, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: {
            ...init?.headers,
            authorization: `Bearer ${o.apiKey}`,
            ...(o.team ? { 'x-service-team-uid': o.team } : {}),
          },
        }),
    });
    for (const type of o.types)
      source.addEventListener(type, (e) => o.onEvent({ id: e.lastEventId, type, data: JSON.parse(e.data) }));
    source.addEventListener('error', (e) => {
      if (source.readyState !== EventSource.CLOSED) return; // it reconnects by itself
      source.close();
      resolve(e.code === 204 ? { refused: null, message: null } : { refused: e.code ?? 0, message: e.message ?? null });
    });
  });
}

/** One line for people: the time, the type and what it is about. */
export function humanLine(e: StreamedEvent, now: Date): string {
  const d = e.data;
  const about = [
    d.run_id,
    d.task_uid,
    d.notification_uid,
    d.delivery_id,
    d.state ?? d.to,
    d.title ?? d.event_type ?? d.role,
  ]
    .filter((v) => typeof v === 'string' && v !== '')
    .join('  ');
  return `${now.toISOString().slice(11, 19)}  ${e.type.padEnd(28)} ${about}`;
}
