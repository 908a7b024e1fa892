/** Approving or denying a run waiting for approval (team admins), and the API's answer in words. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction } from '../hooks';
import type { RunSummary } from '../runs';
import { isAdmin, useSession } from '../session';
import { ActionResult } from '../ui/status';

interface Decided {
  run_id: string;
  state: string;
  approval: { state: string; decided_at: string | null };
}

export type Verb = 'approve' | 'deny';

/** The decision in words: what the run is now. */
const said = ({ title, d }: { title: string; d: Decided }) =>
  d.approval.state === 'approved'
    ? `Approved “${title}”: the run is ${d.state} and goes to the next free worker.`
    : `Denied “${title}”: the run is ${d.state}.`;

/** `decide(run, verb, reason?)` posts the decision; its state says what came of it. */
export function useDecision() {
  return useAction(
    async (run: RunSummary, verb: Verb, reason = '') => ({
      title: run.title || run.run_id,
      d: await api<Decided>(`/agent/runs/${run.run_id}/${verb}`, {
        method: 'POST',
        body: verb === 'deny' ? (reason ? { reason } : {}) : undefined,
      }),
    }),
    said,
  );
}

/**
 * On a run's page (a run with an approval): Approve, or Deny with a reason, while it is pending and
 * for the team's admins only; the answer stays in words after the run has moved on.
 */
export function RunApproval({ run, decided }: { run: RunSummary; decided: () => void }) {
  const session = useSession();
  const [reason, setReason] = useState('');
  const [decision, decide] = useDecision();
  const offered = run.approval?.state === 'pending' && isAdmin(session);
  if (!offered && !decision.message && !decision.problem) return null;
  const act = async (verb: Verb) => (await decide(run, verb, reason.trim())) && decided();
  return (
    <section aria-labelledby="approval">
      <h2 id="approval">Approval</h2>
      {offered && (
        <>
          <label for="deny-reason">Reason for denying (optional)</label>
          <input id="deny-reason" maxLength={2000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
          <div class="row">
            <button type="button" disabled={decision.busy} onClick={() => act('approve')}>
              Approve run
            </button>
            <button type="button" class="danger" disabled={decision.busy} onClick={() => act('deny')}>
              Deny run
            </button>
          </div>
        </>
      )}
      <ActionResult state={decision} />
    </section>
  );
}
