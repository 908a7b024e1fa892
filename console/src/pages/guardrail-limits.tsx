/**
 * A team's or a factory's limits: each as set, or which default applies; for admins a form that
 * replaces them (a field left empty is unset). Defaults as docs/features/guardrails.md gives them.
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { useAction, useApi } from '../hooks';
import { ActionResult, Async } from '../ui/status';

interface Limits {
  max_concurrent_runs: number | null;
  requires_approval: boolean | null;
  approval_timeout_minutes: number | null;
  stuck_after_minutes: number | null;
  max_run_minutes: number | null;
}

type NumberLimit = Exclude<keyof Limits, 'requires_approval'>;

/** Each number limit: its field, what it is called, its unit, and its default (the server's). */
const NUMBERS: Array<[NumberLimit, string, string, string]> = [
  ['max_concurrent_runs', 'Runs at once', 'runs', 'no limit'],
  ['approval_timeout_minutes', 'Approval timeout', 'minutes', '1440 minutes'],
  ['stuck_after_minutes', 'Stuck after', 'minutes without progress', '30 minutes'],
  ['max_run_minutes', 'Longest run', 'minutes', '1440 minutes'],
];

const yesNo = (b: boolean) => (b ? 'yes' : 'no');

function Shown({ limits, unset }: { limits: Limits; unset: (fallback: string) => string }) {
  return (
    <dl class="facts">
      {NUMBERS.map(([key, label, unit, fallback]) => (
        <Fragment key={key}>
          <dt>{label}</dt>
          <dd>{limits[key] === null ? unset(fallback) : `${limits[key]} ${unit}`}</dd>
        </Fragment>
      ))}
      <dt>Requires approval</dt>
      <dd>{limits.requires_approval === null ? unset('no') : yesNo(limits.requires_approval)}</dd>
    </dl>
  );
}

const toForm = (l: Limits) => ({
  ...Object.fromEntries(NUMBERS.map(([key]) => [key, l[key] === null ? '' : String(l[key])])),
  requires_approval: l.requires_approval === null ? '' : yesNo(l.requires_approval),
});

function toBody(form: Record<string, string>) {
  const body: Record<string, number | boolean> = {};
  for (const [key] of NUMBERS) if (form[key]) body[key] = Number(form[key]);
  if (form.requires_approval) body.requires_approval = form.requires_approval === 'yes';
  return body;
}

function LimitsForm({
  path,
  name,
  current,
  saved,
}: {
  path: string;
  name: string;
  current: Limits;
  saved: () => void;
}) {
  const [form, setForm] = useState<Record<string, string>>(toForm(current));
  useEffect(() => setForm(toForm(current)), [current]);
  const [put, doPut] = useAction(
    () => api<Limits>(path, { method: 'PUT', body: toBody(form) }),
    () => `The ${name} are saved.`,
  );
  const id = (field: string) => `${name.replace(/\W+/g, '-').toLowerCase()}-${field}`;
  const set = (key: string) => (e: { currentTarget: { value: string } }) =>
    setForm({ ...form, [key]: e.currentTarget.value });
  return (
    <details class="edit">
      <summary>Change the {name}</summary>
      <form class="card" onSubmit={async (e) => (e.preventDefault(), (await doPut()) && saved())}>
        <p class="muted">An empty field takes the default.</p>
        {NUMBERS.map(([key, label, unit]) => (
          <Fragment key={key}>
            <label for={id(key)}>
              {label} ({unit})
            </label>
            <input id={id(key)} type="number" min="1" step="1" value={form[key]} onInput={set(key)} />
          </Fragment>
        ))}
        <label for={id('approval')}>Requires approval</label>
        <select id={id('approval')} value={form.requires_approval} onChange={set('requires_approval')}>
          <option value="">Not set</option>
          <option value="yes">Yes</option>
          <option value="no">No</option>
        </select>
        <button type="submit" disabled={put.busy}>
          Save {name}
        </button>
        <ActionResult state={put} />
      </form>
    </details>
  );
}

/** `inherits` names what an unset limit falls back to first (a factory: its team's limits). */
export function LimitsView({
  path,
  name,
  admin,
  inherits,
}: {
  path: string;
  name: string;
  admin: boolean;
  inherits?: string;
}) {
  const limits = useApi<Limits>(path);
  const unset = (fallback: string) => `not set (${inherits ? `${inherits}, else ` : ''}default: ${fallback})`;
  return (
    <Async state={limits} what={`Loading the ${name}`}>
      {(l) => (
        <>
          <Shown limits={l} unset={unset} />
          {admin && <LimitsForm path={path} name={name} current={l} saved={limits.reload} />}
        </>
      )}
    </Async>
  );
}
