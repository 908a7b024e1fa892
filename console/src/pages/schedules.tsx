/** Schedules: each with its next due time in its own time zone, pause and resume, and its firings. */
import { api } from '../api';
import { useAction, useApi } from '../hooks';
import { Time, zoned } from '../ui/format';
import { Page } from '../ui/page';
import { ActionResult, Async, Empty } from '../ui/status';

interface Firing {
  due_at: string;
  run_id: string;
  skipped_count: number;
  error: string | null;
}

interface Schedule {
  id: string;
  name: string;
  enabled: boolean;
  cron_schedule: string | null;
  rrule: string | null;
  prompt: string;
  next_run_time: string | null;
  last_spawn_error: string | null;
  history: { last_ran: string | null; firings: Firing[] };
}

/** A schedule's own time zone: its rrule's DTSTART;TZID, else UTC (cron lines are in UTC). */
const zoneOf = (s: Schedule) => /DTSTART;TZID=([^:;\s]+)/.exec(s.rrule ?? '')?.[1] ?? 'UTC';

function Firings({ firings }: { firings: Firing[] }) {
  if (firings.length === 0) return <p class="muted">Not fired yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Due</th>
          <th scope="col">Started</th>
          <th scope="col">Skipped before</th>
        </tr>
      </thead>
      <tbody>
        {firings.map((f) => (
          <tr key={f.due_at}>
            <td>
              <Time iso={f.due_at} />
            </td>
            <td>{f.error ? `Not started: ${f.error}` : <a href={`/runs/${f.run_id}`}>run {f.run_id}</a>}</td>
            <td>{f.skipped_count}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ScheduleCard({ s, changed }: { s: Schedule; changed: () => void }) {
  const [state, toggle] = useAction(
    () => api<Schedule>(`/agent/schedules/${s.id}/${s.enabled ? 'pause' : 'resume'}`, { method: 'POST' }),
    (r) => (r.enabled ? `${r.name} resumed.` : `${r.name} paused: it fires nothing until resumed.`),
  );
  const zone = zoneOf(s);
  return (
    <li class="card">
      <h2>
        {s.name} <span class="badge">{s.enabled ? 'active' : 'paused'}</span>
      </h2>
      <p>
        <code>{s.cron_schedule ?? s.rrule}</code>
      </p>
      <p>
        Next due:{' '}
        {s.next_run_time ? (
          <>
            <strong>{zoned(s.next_run_time, zone)}</strong> ({zone})
          </>
        ) : (
          'not scheduled'
        )}
      </p>
      {s.last_spawn_error && <p class="problem">Last firing failed: {s.last_spawn_error}</p>}
      <button type="button" disabled={state.busy} onClick={async () => (await toggle()) && changed()}>
        {s.enabled ? `Pause ${s.name}` : `Resume ${s.name}`}
      </button>
      <ActionResult state={state} />
      <h3>Firings</h3>
      <Firings firings={s.history.firings} />
    </li>
  );
}

export default function Schedules() {
  const schedules = useApi<{ schedules: Schedule[] }>('/agent/schedules', {}, ['schedule']);
  return (
    <Page title="Schedules">
      <Async state={schedules} what="Loading schedules">
        {({ schedules: list }) =>
          list.length === 0 ? (
            <Empty>
              No schedules: create one with <code>POST /api/v1/agent/schedules</code> (a cron line in UTC, or an RRULE
              with its time zone).
            </Empty>
          ) : (
            <ul class="cards">
              {list.map((s) => (
                <ScheduleCard key={s.id} s={s} changed={schedules.reload} />
              ))}
            </ul>
          )
        }
      </Async>
    </Page>
  );
}
