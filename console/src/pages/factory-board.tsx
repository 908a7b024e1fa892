/** A factory's task board: a column per stage, and a new task. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction, usePaged } from '../hooks';
import { STAGES, type TaskSummary } from '../tasks';
import { State } from '../ui/format';
import { More } from '../ui/page';
import { ActionResult, Empty, Loading, ProblemView } from '../ui/status';

function NewTask({ factoryUid, created }: { factoryUid: string; created: () => void }) {
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [stage, setStage] = useState('TRIAGE');
  const [state, create] = useAction(
    () =>
      api<TaskSummary>(`/factory/${factoryUid}/tasks`, {
        method: 'POST',
        body: { title, stage, ...(description ? { description } : {}) },
      }),
    (t) => `Task "${t.title}" created in ${t.stage}.`,
  );
  return (
    <form
      class="card"
      onSubmit={async (e) => {
        e.preventDefault();
        if (await create()) {
          setTitle('');
          setDescription('');
          created();
        }
      }}
    >
      <h2>New task</h2>
      <label for="task-title">Title</label>
      <input id="task-title" required value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      <label for="task-description">Description</label>
      <textarea
        id="task-description"
        rows={3}
        value={description}
        onInput={(e) => setDescription(e.currentTarget.value)}
      />
      <label for="task-stage">Stage</label>
      <select id="task-stage" value={stage} onChange={(e) => setStage(e.currentTarget.value)}>
        {STAGES.filter((s) => s !== 'CANCELLED').map((s) => (
          <option key={s}>{s}</option>
        ))}
      </select>
      <button type="submit" disabled={state.busy}>
        Create task
      </button>
      <ActionResult state={state} />
    </form>
  );
}

export function Board({ factoryUid }: { factoryUid: string }) {
  const tasks = usePaged<TaskSummary>(
    `/factory/${factoryUid}/tasks`,
    'tasks',
    (t) => t.uid,
    { limit: 100, sort_by: 'updated_at', sort_order: 'desc', include_current_run: true },
    ['task', 'run'],
  );
  return (
    <section aria-labelledby="board">
      <h2 id="board">Task board</h2>
      {tasks.problem && <ProblemView problem={tasks.problem} />}
      {tasks.loading && tasks.items.length === 0 && <Loading what="Loading tasks" />}
      {!tasks.loading && !tasks.problem && tasks.items.length === 0 && (
        <Empty>No tasks yet: create one below, or dispatch work to the factory.</Empty>
      )}
      <div class="board">
        {STAGES.map((stage) => {
          const column = tasks.items.filter((t) => t.stage === stage);
          return (
            <section key={stage} class="column" aria-label={`${stage} (${column.length})`}>
              <h3>
                {stage} <span class="muted">{column.length}</span>
              </h3>
              <ul class="column-list">
                {column.map((t) => (
                  <li key={t.uid} class="task-card">
                    <a href={`/factories/${factoryUid}/tasks/${t.uid}`}>{t.title}</a>
                    {t.current_run && <State state={t.current_run.state} />}
                  </li>
                ))}
              </ul>
            </section>
          );
        })}
      </div>
      <More {...tasks} />
      <NewTask factoryUid={factoryUid} created={tasks.refresh} />
    </section>
  );
}
