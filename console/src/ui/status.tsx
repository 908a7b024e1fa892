/** What every page shows while it waits, when there is nothing, and when the server said no. */
import type { ComponentChildren } from 'preact';
import type { Problem } from '../api';
import type { ActionState } from '../hooks';

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

/** A problem answer as its title and detail (and the fields it names). */
export function ProblemView({ problem }: { problem: Problem }) {
  return (
    <div class="problem" role="alert">
      <strong>{problem.title}</strong>
      <p>{problem.detail}</p>
      {problem.errors.length > 0 && (
        <ul>
          {problem.errors.map((e) => (
            <li key={e.path}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Nothing to show yet, and what to do about it. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

/** The answer of an action in words, or its problem. */
export function ActionResult({ state }: { state: ActionState }) {
  if (state.problem) return <ProblemView problem={state.problem} />;
  if (state.message)
    return (
      <p class="said" role="status">
        {state.message}
      </p>
    );
  return null;
}

interface AsyncProps<T> {
  state: { data: T | null; problem: Problem | null; loading: boolean };
  children: (data: T) => ComponentChildren;
  what?: string;
}

/** Loading, the problem, or the data. */
export function Async<T>({ state, children, what }: AsyncProps<T>) {
  if (state.problem) return <ProblemView problem={state.problem} />;
  if (state.data === null) return state.loading ? <Loading what={what} /> : null;
  return <>{children(state.data)}</>;
}
