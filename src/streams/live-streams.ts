/** The event streams of a process: the tail, the open connections and their bounds, from the configuration. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Runtime } from '../runtime.js';
import { Connections } from './connections.js';
import { EventStreams } from './hub.js';
import { openStream, type StreamRequest } from './open-stream.js';
import type { StreamEventSource } from './stream-events.js';

export interface LiveStreams {
  hub: EventStreams;
  connections: Connections;
  /** Answers `req` with an event stream until it ends (see open-stream.ts). */
  open(req: FastifyRequest, reply: FastifyReply, request: StreamRequest): Promise<void>;
}

const opened = new WeakMap<Runtime, LiveStreams>();

/** The event streams of the server on `rt` (opened with it). */
export function streamsOf(rt: Runtime): LiveStreams {
  const streams = opened.get(rt);
  if (!streams) throw new Error('the event streams were not opened on this runtime');
  return streams;
}

/** Opens the event streams of the server on `rt`, of the types the features register. */
export function openLiveStreams(rt: Runtime, sources: readonly StreamEventSource[]): LiveStreams {
  const c = rt.config;
  const hub = new EventStreams(rt, sources);
  const connections = new Connections({
    perKey: c.STREAM_MAX_PER_KEY,
    perProcess: c.STREAM_MAX_PER_PROCESS,
    heartbeatMs: c.STREAM_HEARTBEAT_SECONDS * 1000,
  });
  const limits = { bufferBytes: c.STREAM_BUFFER_BYTES, replayMax: c.STREAM_REPLAY_MAX_EVENTS };
  const streams: LiveStreams = {
    hub,
    connections,
    open: (req, reply, request) => openStream(req, reply, hub, connections, request, limits),
  };
  opened.set(rt, streams);
  return streams;
}
