/**
 * How the OpenAPI document tells a stream's events: the 200 answer is `text/event-stream`, its
 * schema one of the stream's types, each `{event, data}` with `data` the type's payload schema.
 */
import { z } from 'zod';
import type { StreamEventType } from './stream-events.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The types a `text/event-stream` route sends, for the OpenAPI document. */
    eventStream?: ReadonlyMap<string, StreamEventType>;
  }
}

export function eventStreamResponse(types: ReadonlyMap<string, StreamEventType>) {
  const events = [...types].map(([name, type]) => ({
    type: 'object',
    title: name,
    description: type.description,
    properties: {
      id: { type: 'string', description: 'The event position, opaque: resume after it with Last-Event-ID' },
      event: { type: 'string', enum: [name] },
      data: z.toJSONSchema(type.schema, { target: 'openapi-3.0', io: 'output', unrepresentable: 'any' }),
    },
    required: ['id', 'event', 'data'],
  }));
  return {
    description:
      'A text/event-stream of the events below (`id:`, `event:`, `data:` a JSON payload), and comment lines at least every 15 s',
    content: { 'text/event-stream': { schema: { oneOf: events } } },
  };
}
