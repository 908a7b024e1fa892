/**
 * Live pages, through one module per tab: one EventSource to the active team's activity stream
 * (`GET /api/v1/events?team_uid=`: an EventSource cannot send the team header), whose events tell
 * each page that subscribed to their topic to refresh what it shows. Where the stream closes for
 * good (a server without it, or access gone), pages poll their own first page instead: every 5 s
 * while the tab is visible, nothing while it is hidden.
 */

/** What a page watches: each topic is the prefix of the stream's event types (`run.failed`). */
export type Topic = 'run' | 'task' | 'delivery' | 'schedule' | 'inbox' | 'benchmark' | 'scorer';

/** The stream's event types by topic (an EventSource listens by exact name; docs/features/streams.md). */
const EVENT_TYPES: Record<Topic, readonly string[]> = {
  run: [
    'run.queued',
    'run.in_progress',
    'run.succeeded',
    'run.failed',
    'run.errored',
    'run.cancelled',
    'run.blocked',
    'run.approval_requested',
    'run.approved',
    'run.denied',
    'run.approval_expired',
  ],
  task: ['task.stage_changed'],
  delivery: ['webhook.delivery_accepted', 'webhook.delivery_duplicated', 'webhook.delivery_rejected'],
  schedule: ['schedule.fired'],
  inbox: ['inbox.notification_raised', 'inbox.notification_cleared'],
  benchmark: ['benchmark.run_changed'],
  scorer: ['scorer.run_scored'],
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

function openStream(team: string): void {
  const es = new EventSource(`/api/v1/events?team_uid=${encodeURIComponent(team)}`);
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

/** Streams (or polls) for the active team; called when the session starts and whenever the team changes. */
export function followTeam(team: string | null): void {
  closeStream();
  startPolling();
  if (team && streamable && typeof EventSource !== 'undefined') openStream(team);
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
