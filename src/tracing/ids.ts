/**
 * Trace and span ids derived from what the log records, so that the trace a server exports while a
 * run happens and the one derived from the log afterwards (GET /agent/runs/{run_id}/trace) are the
 * same trace: a run tree's trace id from its root run's id, a run's span id from its run id (one
 * RunCreated per run), every other span's from the id of the event that opens it.
 */
import { createHash } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/** 32 hex digits (W3C trace-id), never all zeros. */
export const traceIdOf = (rootRunId: string): string => nonZero(digest(`shopfloor-trace:${rootRunId}`).slice(0, 32));

/** 16 hex digits (W3C parent-id) for the run's own span. */
export const runSpanIdOf = (runId: string): string => nonZero(digest(`shopfloor-run:${runId}`).slice(0, 16));

/** 16 hex digits for the span an event opens. */
export const eventSpanIdOf = (eventId: string): string => nonZero(digest(`shopfloor-event:${eventId}`).slice(0, 16));

/** The W3C `traceparent` of a run's span (sampled): a worker's spans for the run are its children. */
export const runTraceparent = (runId: string, rootRunId: string): string =>
  `00-${traceIdOf(rootRunId)}-${runSpanIdOf(runId)}-01`;

/** An all-zero id is invalid in W3C trace context; a digest gives one once in 2^64, mended anyway. */
const nonZero = (id: string) => (/^0+$/.test(id) ? `${id.slice(0, -1)}1` : id);
