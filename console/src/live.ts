/**
 * Live pages, through one module per tab: one EventSource to the team's activity stream
 * (`GET /api/v1/events`, the streams capability), whose events tell each page that subscribed to
 * their topic to refresh what it shows. Where that stream is not served (a 404 before it opens,
 * or it closes for good), and for a team other than the session's default one (an EventSource
 * cannot send the team header), pages poll their own first page instead: every 5 s while the tab
 * is visible, nothing while it is hidden.
 */

/** What a page watches: each topic is the prefix of the stream's event types (`run.failed`). */
export type Topic = 'run' | 'task' | 'delivery' | 'schedule' | 'inbox' | 'benchmark' | 'scorer';

/** The stream's event types by topic (an EventSource listens by exact name). */
const EVENT_TYPES: Record<Topic, readonly string[]> = {
  run: [
    'run.created',
    'run.queued',
    'run.in_progress',
    'run.succeeded',
    'run.failed',
    'run.errored',
    'run.cancelled',
    'run.blocked',
  ],
  task: ['task.created', 'task.stage_changed', 'task.updated'],
  delivery: ['delivery.received'],
  schedule: ['schedule.fired'],
  inbox: ['inbox.notification_raised', 'inbox.notification_cleared'],
  benchmark: ['benchmark.progress'],
  scorer: ['scorer.progress'],
};

const POLL_MS = 5_000;
/** Events coming in a burst make one refresh. */
const SETTLE_MS = 250;

interface Subscriber {
  topics: readonly Topic[];
  refresh: () => void;
  pending?: ReturnType<typeof setTimeout>;
}

const subscribers = new Set<Subscriber>();
let source: EventSource | null = null;
let poller: ReturnType<typeof setInterval> | null = null;
let streamable = true;

function deliver(topic: Topic): void {
  for (const s of subscribers) {
    if (!s.topics.includes(topic) || s.pending) continue;
    s.pending = setTimeout(() => {
      s.pending = undefined;
      s.refresh();
    }, SETTLE_MS);
  }
}

function poll(): void {
  if (document.visibilityState !== 'visible') return;
  for (const s of subscribers) s.refresh();
}

function startPolling(): void {
  poller ??= setInterval(poll, POLL_MS);
}

function stopPolling(): void {
  if (poller) clearInterval(poller);
  poller = null;
}

function openStream(): void {
  const es = new EventSource('/api/v1/events');
  source = es;
  for (const [topic, types] of Object.entries(EVENT_TYPES) as Array<[Topic, readonly string[]]>)
    for (const type of types) es.addEventListener(type, () => deliver(topic));
  es.onopen = stopPolling;
  // Once open, the browser reconnects by itself (with Last-Event-ID); closed for good, we poll.
  es.onerror = () => {
    if (es.readyState !== EventSource.CLOSED) return;
    closeStream();
    streamable = false;
    startPolling();
  };
}

function closeStream(): void {
  source?.close();
  source = null;
}

/**
 * Stream or poll for the active team: the stream serves the session's default team only.
 * Called when the session starts and whenever the team changes.
 */
export function followTeam(isDefaultTeam: boolean): void {
  closeStream();
  startPolling();
  if (isDefaultTeam && streamable && typeof EventSource !== 'undefined') openStream();
}

/** Ends live updates (sign-out). */
export function stopLive(): void {
  closeStream();
  stopPolling();
}

/** Calls `refresh` whenever something of these topics changes; returns the unsubscribe. */
export function subscribe(topics: readonly Topic[], refresh: () => void): () => void {
  const s: Subscriber = { topics, refresh };
  subscribers.add(s);
  return () => {
    if (s.pending) clearTimeout(s.pending);
    subscribers.delete(s);
  };
}
