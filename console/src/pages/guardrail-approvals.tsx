/**
 * Runs waiting for a team admin's approval, with Approve and Deny for admins. The API has no
 * filter for them: the console reads the queued runs a page at a time and shows those pending.
 */
import { useState } from 'preact/hooks';
import { usePaged } from '../hooks';
import type { RunSummary } from '../runs';
import { Time } from '../ui/format';
import { More } from '../ui/page';
import { ActionResult, Empty, Loading, ProblemView } from '../ui/status';
import { useDecision, type Verb } from './approval-decision';

const RULES: Record<string, string> = {
  factory: "its factory's limits",
  team: "the team's limits",
  automation: 'its automation',
  schedule: 'its schedule',
};

function Decide({ run, busy, decide }: { run: RunSummary; busy: boolean; decide: (r: RunSummary, v: Verb) => void }) {
  return (
    <div class="row">
      <button type="button" disabled={busy} onClick={() => decide(run, 'approve')}>
        Approve {run.title}
      </button>
      <button type="button" class="danger" disabled={busy} onClick={() => decide(run, 'deny')}>
        Deny {run.title}
      </button>
    </div>
  );
}

export function Approvals({ admin }: { admin: boolean }) {
  const queued = usePaged<RunSummary>('/agent/runs', 'runs', (r) => r.run_id, { state: 'QUEUED', limit: 50 }, ['run']);
  // Decided here: hidden at once (a refresh keeps rows past its first page as they were).
  const [decided, setDecided] = useState<ReadonlySet<string>>(new Set());
  const pending = queued.items.filter((r) => r.approval?.state === 'pending' && !decided.has(r.run_id));
  const [decision, decide] = useDecision();
  const onDecide = async (run: RunSummary, verb: Verb) => {
    if (!(await decide(run, verb))) return;
    setDecided((s) => new Set([...s, run.run_id]));
    queued.refresh();
  };
  return (
    <>
      <ActionResult state={decision} />
      {queued.problem && <ProblemView problem={queued.problem} />}
      {queued.loading && queued.items.length === 0 && <Loading what="Loading runs waiting for approval" />}
      {!queued.loading && !queued.problem && pending.length === 0 && (
        <Empty>
          {queued.hasMore
            ? 'None of the queued runs read so far waits for approval: load more to look further.'
            : 'No run waits for approval. Runs wait here when limits or an automation require approval.'}
        </Empty>
      )}
      {!admin && pending.length > 0 && <p class="muted">Only a team admin can approve or deny these runs.</p>}
      <ul class="cards">
        {pending.map((r) => (
          <li key={r.run_id} class="card">
            <a href={`/runs/${r.run_id}`}>{r.title || r.run_id}</a> asked by{' '}
            {RULES[r.approval!.rule] ?? r.approval!.rule} <Time iso={r.approval!.requested_at} />, expires{' '}
            <Time iso={r.approval!.expires_at} />
            {admin && <Decide run={r} busy={decision.busy} decide={onDecide} />}
          </li>
        ))}
      </ul>
      <More {...queued} />
    </>
  );
}
