/** Run: its state, times, creator, factory and cost; actions; timeline; conversation; artifacts; tree; usage. */
import { useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, apiUrl } from '../api';
import { useAction, useApi } from '../hooks';
import { type Approval, type Artifact, type RunSummary, runCost, TERMINAL, type Usage } from '../runs';
import { Json, State, Time, usd } from '../ui/format';
import { Page } from '../ui/page';
import { ActionResult, Async, Empty } from '../ui/status';
import { RunRows } from './runs';
import { Conversation } from './run-conversation';
import { RunApproval } from './approval-decision';

/** A run's approval in words: pending until when, or who decided and when. */
function ApprovalState({ approval: a }: { approval: Approval }) {
  if (a.state === 'pending')
    return (
      <>
        waiting for a team admin (asked by its {a.rule} rule), expires <Time iso={a.expires_at} />
      </>
    );
  if (a.state === 'expired')
    return (
      <>
        expired: no one decided by <Time iso={a.expires_at} />
      </>
    );
  return (
    <>
      {a.state} by {a.decided_by ? `${a.decided_by.type} ${a.decided_by.uid}` : 'someone'} <Time iso={a.decided_at} />
    </>
  );
}

function Summary({ run }: { run: RunSummary }) {
  return (
    <dl class="facts">
      <dt>State</dt>
      <dd>
        <State state={run.state} /> {run.status_message?.message}
      </dd>
      {run.queue_position !== undefined && (
        <>
          <dt>Place in the queue</dt>
          <dd>{run.queue_position === 1 ? '1 (next)' : run.queue_position}</dd>
        </>
      )}
      {run.approval && (
        <>
          <dt>Approval</dt>
          <dd>
            <ApprovalState approval={run.approval} />
          </dd>
        </>
      )}
      <dt>Created</dt>
      <dd>
        <Time iso={run.created_at} />
      </dd>
      <dt>Started</dt>
      <dd>
        <Time iso={run.started_at} />
      </dd>
      <dt>Finished</dt>
      <dd>
        <Time iso={run.finished_at} />
      </dd>
      <dt>Creator</dt>
      <dd>{run.creator ? `${run.creator.type} ${run.creator.uid}` : '—'}</dd>
      <dt>Factory</dt>
      <dd>{run.factory_uid ? <a href={`/factories/${run.factory_uid}`}>{run.factory_uid}</a> : '—'}</dd>
      <dt>Source</dt>
      <dd>{run.source}</dd>
      <dt>Cost</dt>
      <dd>{usd(runCost(run.request_usage))}</dd>
    </dl>
  );
}

function Actions({ run, reload }: { run: RunSummary; reload: () => void }) {
  const [message, setMessage] = useState('');
  const path = `/agent/runs/${run.run_id}`;
  const [cancel, doCancel] = useAction(
    () => api<string>(`${path}/cancel`, { method: 'POST' }),
    () => 'The run is cancelled.',
  );
  const [interrupt, doInterrupt] = useAction(
    () => api(`${path}/interrupt`, { method: 'POST' }),
    () => 'Interrupt sent: a live turn stops; with no live turn nothing changes.',
  );
  const [followUp, doFollowUp] = useAction(
    (m: string) =>
      api<{ routed_to: string; state: string }>(`${path}/followups`, { method: 'POST', body: { message: m } }),
    (r) => `Follow-up accepted (${r.routed_to.replace(/_/g, ' ')}); the run is ${r.state}.`,
  );
  const after = (p: Promise<unknown>) => p.then(reload);
  return (
    <section aria-labelledby="actions">
      <h2 id="actions">Actions</h2>
      <div class="row">
        {!TERMINAL.has(run.state) && (
          <button type="button" disabled={cancel.busy} onClick={() => after(doCancel())}>
            Cancel run
          </button>
        )}
        <button type="button" disabled={interrupt.busy} onClick={() => after(doInterrupt())}>
          Interrupt
        </button>
      </div>
      <ActionResult state={cancel} />
      <ActionResult state={interrupt} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void after(doFollowUp(message).then((r) => r && setMessage('')));
        }}
      >
        <label for="followup">Follow-up message</label>
        <textarea id="followup" required rows={3} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        <button type="submit" disabled={followUp.busy}>
          Send follow-up
        </button>
      </form>
      <ActionResult state={followUp} />
    </section>
  );
}

interface TimelineEvent {
  event_uuid: string;
  event_type: string;
  occurred_at: string;
  payload: Record<string, unknown>;
}

function Timeline({ runId }: { runId: string }) {
  const timeline = useApi<{ events: TimelineEvent[] }>(`/agent/runs/${runId}/timeline`, {}, ['run']);
  return (
    <section aria-labelledby="timeline">
      <h2 id="timeline">Timeline</h2>
      <Async state={timeline} what="Loading the timeline">
        {({ events }) =>
          events.length === 0 ? (
            <Empty>No timeline steps yet: a worker reports them as it executes the run.</Empty>
          ) : (
            <ol class="timeline">
              {events.map((e) => (
                <li key={e.event_uuid}>
                  <Time iso={e.occurred_at} /> <strong>{e.event_type}</strong>{' '}
                  {typeof e.payload.message === 'string' ? e.payload.message : ''}
                </li>
              ))}
            </ol>
          )
        }
      </Async>
    </section>
  );
}

function ArtifactItem({ a }: { a: Artifact }) {
  const d = a.data;
  const text = String(d.title ?? d.filename ?? d.url ?? d.artifact_uid ?? a.artifact_type);
  if (typeof d.url === 'string' && /^https?:\/\//.test(d.url))
    return (
      <a href={d.url} rel="noreferrer noopener" target="_blank">
        {text}
      </a>
    );
  if (typeof d.artifact_uid === 'string' && (a.artifact_type === 'FILE' || a.artifact_type === 'SCREENSHOT'))
    return <a href={apiUrl(`/agent/artifacts/${d.artifact_uid}/download`)}>{text}</a>;
  return <span>{text}</span>;
}

function Artifacts({ run }: { run: RunSummary }) {
  const list = run.artifacts ?? [];
  return (
    <section aria-labelledby="artifacts">
      <h2 id="artifacts">Artifacts</h2>
      {list.length === 0 ? (
        <Empty>No artifacts: pull requests, plans and files the run produces appear here.</Empty>
      ) : (
        <ul>
          {list.map((a, i) => (
            <li key={i}>
              <span class="badge">{a.artifact_type}</span> <ArtifactItem a={a} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Tree({ run }: { run: RunSummary }) {
  const children = useApi<{ runs: RunSummary[] }>('/agent/runs', { ancestor_run_id: run.run_id, limit: 50 }, ['run']);
  const handoffs = useApi<{ attachments: Array<{ attachment_id: string; filename: string; download_url: string }> }>(
    `/agent/runs/${run.run_id}/handoff/attachments`,
  );
  return (
    <section aria-labelledby="tree">
      <h2 id="tree">Run tree</h2>
      <p>
        Parent:{' '}
        {run.parent_run_id ? <a href={`/runs/${run.parent_run_id}`}>{run.parent_run_id}</a> : 'none (a root run)'}
      </p>
      <Async state={children} what="Loading child runs">
        {({ runs }) => (runs.length ? <RunRows runs={runs} /> : <p class="muted">No child runs.</p>)}
      </Async>
      <h3>Handoffs</h3>
      <Async state={handoffs} what="Loading handoffs">
        {({ attachments }) =>
          attachments.length ? (
            <ul>
              {attachments.map((h) => (
                <li key={h.attachment_id}>
                  <a href={h.download_url}>{h.filename}</a>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No handoff files.</p>
          )
        }
      </Async>
    </section>
  );
}

function UsageSection({ runId }: { runId: string }) {
  const usage = useApi<{ status: string; reason?: string; usage: Usage | null }>(`/agent/runs/${runId}/harness-usage`);
  return (
    <section aria-labelledby="usage">
      <h2 id="usage">Usage and cost</h2>
      <Async state={usage} what="Loading usage">
        {(u) =>
          u.usage ? (
            <dl class="facts">
              <dt>Inference</dt>
              <dd>{usd(u.usage.inference_cost_usd)}</dd>
              <dt>Compute</dt>
              <dd>{usd(u.usage.compute_cost_usd)}</dd>
              <dt>Platform</dt>
              <dd>{usd(u.usage.platform_cost_usd)}</dd>
              <dt>Tokens</dt>
              <dd>{u.usage.total_tokens?.toLocaleString() ?? '—'}</dd>
            </dl>
          ) : (
            <Empty>No usage reported yet{u.reason ? `: ${u.reason}` : ''}.</Empty>
          )
        }
      </Async>
    </section>
  );
}

export default function Run() {
  const { params } = useRoute();
  const runId = params.runId!;
  const run = useApi<RunSummary>(`/agent/runs/${runId}`, {}, ['run']);
  return (
    <Page title={run.data?.title || 'Run'}>
      <Async state={run} what="Loading the run">
        {(r) => (
          <>
            <p class="muted">
              <code>{r.run_id}</code> · <a href={`/audit?kind=run&id=${r.run_id}`}>Audit this run</a>
            </p>
            <Summary run={r} />
            {r.approval && <RunApproval run={r} decided={run.reload} />}
            <Actions run={r} reload={run.reload} />
            <Timeline runId={runId} />
            <Conversation runId={runId} />
            <Artifacts run={r} />
            <Tree run={r} />
            <UsageSection runId={runId} />
            <details>
              <summary>Prompt</summary>
              <Json value={r.prompt} label="Prompt" />
            </details>
          </>
        )}
      </Async>
    </Page>
  );
}
