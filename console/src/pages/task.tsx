/** Task: its stage, runs and outputs; edit, move and cancel it. */
import { useRoute } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction, useApi } from '../hooks';
import type { RunSummary } from '../runs';
import { STAGES, type TaskSummary } from '../tasks';
import { Json, Time } from '../ui/format';
import { Page } from '../ui/page';
import { ActionResult, Async, Empty } from '../ui/status';
import { RunRows } from './runs';

function Edit({ task, saved }: { task: TaskSummary; saved: () => void }) {
  const path = `/factory/${task.factory_uid}/tasks/${task.uid}`;
  const [title, setTitle] = useState(task.title);
  const [description, setDescription] = useState(task.description ?? '');
  const [stage, setStage] = useState(task.stage);
  const [edit, doEdit] = useAction(
    () => api<TaskSummary>(path, { method: 'PATCH', body: { title, description } }),
    () => 'Task saved.',
  );
  const [move, doMove] = useAction(
    () => api<TaskSummary>(path, { method: 'PATCH', body: { stage } }),
    (t) => `Task moved to ${t.stage}.`,
  );
  const [cancel, doCancel] = useAction(
    () => api<TaskSummary>(`${path}/cancel`, { method: 'POST' }),
    () => 'Task cancelled, with its runs.',
  );
  const then = (p: Promise<unknown>) => p.then((r) => r && saved());
  return (
    <>
      <form class="card" onSubmit={(e) => (e.preventDefault(), then(doEdit()))}>
        <h2>Edit</h2>
        <label for="edit-title">Title</label>
        <input id="edit-title" required value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
        <label for="edit-description">Description</label>
        <textarea
          id="edit-description"
          rows={3}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
        <button type="submit" disabled={edit.busy}>
          Save
        </button>
        <ActionResult state={edit} />
      </form>
      <form class="card" onSubmit={(e) => (e.preventDefault(), then(doMove()))}>
        <h2>Move</h2>
        <label for="move-stage">Stage</label>
        <select id="move-stage" value={stage} onChange={(e) => setStage(e.currentTarget.value)}>
          {STAGES.filter((s) => s !== 'CANCELLED').map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <button type="submit" disabled={move.busy}>
          Move task
        </button>
        <ActionResult state={move} />
      </form>
      {task.stage !== 'CANCELLED' && task.stage !== 'COMPLETE' && (
        <div class="card">
          <button type="button" class="danger" disabled={cancel.busy} onClick={() => then(doCancel())}>
            Cancel task
          </button>
          <ActionResult state={cancel} />
        </div>
      )}
    </>
  );
}

function TaskRuns({ task }: { task: TaskSummary }) {
  const root = task.run_id;
  const root$ = useApi<RunSummary>(root ? `/agent/runs/${root}` : null, {}, ['run']);
  const children = useApi<{ runs: RunSummary[] }>(root ? '/agent/runs' : null, { ancestor_run_id: root, limit: 50 }, [
    'run',
  ]);
  if (!root) return <Empty>No run yet: the task's first run starts when it is dispatched.</Empty>;
  return (
    <Async state={root$} what="Loading runs">
      {(r) => <RunRows runs={[r, ...(children.data?.runs ?? [])]} />}
    </Async>
  );
}

export default function Task() {
  const { params } = useRoute();
  const task = useApi<TaskSummary>(`/factory/${params.factoryUid}/tasks/${params.taskUid}`, {}, ['task']);
  return (
    <Page title={task.data?.title ?? 'Task'}>
      <Async state={task} what="Loading the task">
        {(t) => (
          <>
            <p>
              <a href={`/factories/${t.factory_uid}`}>Back to the board</a> ·{' '}
              <a href={`/audit?kind=task&factory=${t.factory_uid}&id=${t.uid}`}>Audit this task</a>
            </p>
            <dl class="facts">
              <dt>Stage</dt>
              <dd>
                <span class="badge">{t.stage}</span>
              </dd>
              <dt>Created</dt>
              <dd>
                <Time iso={t.created_at} />
              </dd>
              <dt>Updated</dt>
              <dd>
                <Time iso={t.updated_at} />
              </dd>
            </dl>
            {t.description && <p>{t.description}</p>}
            <h2>Runs</h2>
            <TaskRuns task={t} />
            <h2>Outputs</h2>
            {t.outputs?.length ? (
              t.outputs.map((o, i) => <Json key={i} value={o} label={`Output ${i + 1}`} />)
            ) : (
              <Empty>No outputs yet: plans and pull requests of the task's runs appear here.</Empty>
            )}
            <Edit key={t.uid} task={t} saved={task.reload} />
          </>
        )}
      </Async>
    </Page>
  );
}
