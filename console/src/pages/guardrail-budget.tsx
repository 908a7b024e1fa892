/**
 * One budget (a team's, a factory's or a member's): this month's spent, reserved and remaining,
 * and for admins a form to set, change or delete it. A 404 is "no budget set", not a problem.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { useAction, useApi } from '../hooks';
import { usd } from '../ui/format';
import { ActionResult, Empty, Loading, ProblemView } from '../ui/status';

export interface BudgetAnswer {
  monthly_usd: number;
  per_run_usd: number | null;
  notify_at: number[];
  period_start: string;
  period_end: string;
  spent_usd: number;
  reserved_usd: number;
  remaining_usd: number;
}

/** A budget's period is a calendar month in UTC: named as such, whatever the reader's zone. */
const month = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });

function Figures({ b }: { b: BudgetAnswer }) {
  return (
    <dl class="facts">
      <dt>Spent</dt>
      <dd>{usd(b.spent_usd)}</dd>
      <dt>Reserved</dt>
      <dd>{usd(b.reserved_usd)}</dd>
      <dt>Remaining</dt>
      <dd>{usd(b.remaining_usd)}</dd>
      <dt>Period</dt>
      <dd>
        <time dateTime={b.period_start}>{month.format(new Date(b.period_start))}</time> (UTC)
      </dd>
      <dt>Monthly</dt>
      <dd>{usd(b.monthly_usd)}</dd>
      <dt>Per run</dt>
      <dd>{b.per_run_usd === null ? 'no cap' : usd(b.per_run_usd)}</dd>
      <dt>Notify at</dt>
      <dd>{b.notify_at.map((f) => `${Math.round(f * 100)} %`).join(', ')}</dd>
    </dl>
  );
}

/** "0.5, 0.8, 1" as numbers; a word that is no number goes as null, so the server names it. */
const fractions = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => (Number.isFinite(Number(s)) ? Number(s) : null));

function BudgetForm({ path, name, current, saved }: BudgetFormProps) {
  const [monthly, setMonthly] = useState('');
  const [perRun, setPerRun] = useState('');
  const [notifyAt, setNotifyAt] = useState('');
  useEffect(() => {
    setMonthly(current ? String(current.monthly_usd) : '');
    setPerRun(current?.per_run_usd ? String(current.per_run_usd) : '');
    setNotifyAt(current ? current.notify_at.join(', ') : '');
  }, [current]);
  const body = () => ({
    monthly_usd: Number(monthly),
    ...(perRun ? { per_run_usd: Number(perRun) } : {}),
    ...(notifyAt.trim() ? { notify_at: fractions(notifyAt) } : {}),
  });
  const [put, doPut] = useAction(
    () => api<BudgetAnswer>(path, { method: 'PUT', body: body() }),
    (b) => `Budget saved: ${usd(b.monthly_usd)} a month, ${usd(b.remaining_usd)} remaining this month.`,
  );
  const [removal, doRemove] = useAction(
    () => api(path, { method: 'DELETE' }),
    () => 'Budget deleted: runs here are no longer capped by it.',
  );
  const id = (field: string) => `${name.replace(/\W+/g, '-').toLowerCase()}-${field}`;
  return (
    <details class="edit">
      <summary>{current ? `Change the ${name}` : `Set the ${name}`}</summary>
      <form class="card" onSubmit={async (e) => (e.preventDefault(), (await doPut()) && saved())}>
        <label for={id('monthly')}>Monthly amount (US dollars)</label>
        <input
          id={id('monthly')}
          type="number"
          step="any"
          required
          value={monthly}
          onInput={(e) => setMonthly(e.currentTarget.value)}
        />
        <label for={id('per-run')}>Cap per run (US dollars, optional)</label>
        <input
          id={id('per-run')}
          type="number"
          step="any"
          value={perRun}
          onInput={(e) => setPerRun(e.currentTarget.value)}
        />
        <label for={id('notify')}>
          Notify at (fractions of the monthly amount, comma separated; default 0.5, 0.8, 1)
        </label>
        <input id={id('notify')} value={notifyAt} onInput={(e) => setNotifyAt(e.currentTarget.value)} />
        <div class="row">
          <button type="submit" disabled={put.busy}>
            Save {name}
          </button>
          {current && (
            <button
              type="button"
              class="danger"
              disabled={removal.busy}
              onClick={async () => (await doRemove()) !== undefined && saved()}
            >
              Delete {name}
            </button>
          )}
        </div>
        <ActionResult state={put} />
        <ActionResult state={removal} />
      </form>
    </details>
  );
}

interface BudgetFormProps {
  path: string;
  name: string;
  current: BudgetAnswer | null;
  saved: () => void;
}

/** The budget at `path` (its name says whose: "team budget"); `admin` offers the form. */
export function Budget({ path, name, admin }: { path: string; name: string; admin: boolean }) {
  const budget = useApi<BudgetAnswer>(path);
  const unset = budget.problem?.status === 404;
  return (
    <>
      {budget.loading && budget.data === null && <Loading what={`Loading the ${name}`} />}
      {budget.problem && !unset && <ProblemView problem={budget.problem} />}
      {budget.data && <Figures b={budget.data} />}
      {unset && (
        <Empty>
          No {name} set{admin ? ': set one to cap spend.' : '. A team admin can set one to cap spend.'}
        </Empty>
      )}
      {admin && (budget.data || unset) && (
        <BudgetForm path={path} name={name} current={budget.data} saved={budget.reload} />
      )}
    </>
  );
}
