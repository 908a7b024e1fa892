/**
 * What a feature registers for the event streams, in one place (its `streamEvents`): the domain
 * events it maps, the public types it sends with the schema of each one's `data`, and the mapper.
 * A mapped item carries the read check of the resource it tells of (the same check the feature's
 * GET routes call), so a stream never holds a rule of its own. Outbound webhooks send the same
 * items (their names and payloads), to the item's team.
 */
import type { z } from 'zod';
import type { RecordedEvent } from '../eventstore/port.js';
import type { Principal } from '../http/principal.js';
import type { Runtime } from '../runtime.js';

/** Which streams carry a type: a team's activity (`GET /events`) and a run's (`GET /agent/runs/{id}/events`). */
type Feed = 'team' | 'run';

/**
 * Who reads a stream. `team` set: what the caller may list in that team (the team's activity);
 * null: what it may read by id (any of its teams, its own personal resources).
 */
interface Viewer {
  principal: Principal;
  team: string | null;
}

export interface StreamItem {
  type: string;
  /** Built from the public resource of its type; checked against the type's schema before it leaves. */
  data: Record<string, unknown>;
  /** The team that owns what it tells of; null: a personal resource (no team's endpoints hear of it). */
  team_uid: string | null;
  factory_uid: string | null;
  /** The run it tells of and that run's ancestors, nearest first (a run's stream carries those below it). */
  run: { run_id: string; ancestors: readonly string[] } | null;
  /** The read check of the resource, the one its GET routes call. */
  readable(viewer: Viewer): boolean;
}

export interface StreamEventType {
  feeds: readonly Feed[];
  description: string;
  schema: z.ZodObject;
}

export interface StreamEventSource {
  /** The domain event types `map` reads. */
  from: readonly string[];
  /** The public types it sends, by name. */
  types: Readonly<Record<string, StreamEventType>>;
  /** What `event` tells, or null when it tells nothing (the resource is gone, the event is internal). */
  map(rt: Runtime, event: RecordedEvent): Promise<StreamItem | null>;
}

/** Every registered type by name; a name registered twice is a mistake caught at start. */
export function streamEventTypes(sources: readonly StreamEventSource[]): Map<string, StreamEventType> {
  const types = new Map<string, StreamEventType>();
  for (const source of sources) {
    for (const [name, type] of Object.entries(source.types)) {
      if (types.has(name)) throw new Error(`stream event type ${name} is registered twice`);
      types.set(name, type);
    }
  }
  return types;
}
