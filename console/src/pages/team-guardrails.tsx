/**
 * Budgets, limits and approvals (the guardrails capability): this component is the place for
 * them. Until the server serves them it says so, and shows no figures of its own making.
 */
import { useApi } from '../hooks';
import { Json } from '../ui/format';
import { Loading, ProblemView } from '../ui/status';

export function Guardrails({ teamUid }: { teamUid: string }) {
  const budget = useApi<unknown>(`/teams/${teamUid}/budget`);
  const limits = useApi<unknown>(`/teams/${teamUid}/limits`);
  const missing = budget.problem?.status === 404 && limits.problem?.status === 404;
  return (
    <section aria-labelledby="guardrails">
      <h2 id="guardrails">Budgets, limits and approvals</h2>
      {budget.loading || limits.loading ? (
        <Loading what="Loading guardrails" />
      ) : missing ? (
        <p class="muted">Budgets, limits and approvals are not available on this server.</p>
      ) : (
        <>
          {budget.problem && budget.problem.status !== 404 && <ProblemView problem={budget.problem} />}
          {budget.data !== null && <Json value={budget.data} label="Team budget" />}
          {limits.problem && limits.problem.status !== 404 && <ProblemView problem={limits.problem} />}
          {limits.data !== null && <Json value={limits.data} label="Team limits" />}
        </>
      )}
    </section>
  );
}
