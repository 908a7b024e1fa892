/** Audit: the events of a task or a run, one per line, and its state as of any moment on a time line. */
import { useState } from 'preact/hooks';
import { usePaged, useApi } from '../hooks';
import { Json, Time } from '../ui/format';
import { More, Page, useQuery } from '../ui/page';
import { Async, Empty, Loading, ProblemView } from '../ui/status';

interface Entry {
  id: string;
  position: string;
  type: string;
  occurred_at: string;
  actor: { type: string; uid: string };
  correlation_id: string;
  causation_id: string | null;
}

function Picker() {
  const [query, setQuery] = useQuery();
  const [kind, setKind] = useState(query.kind === 'task' ? 'task' : 'run');
  const [id, setId] = useState(query.id ?? '');
  const [factory, setFactory] = useState(query.factory ?? '');
  return (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        setQuery({ kind, id: id.trim(), factory: kind === 'task' ? factory.trim() : null, at: null });
      }}
    >
      <label>
        What
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          <option value="run">A run</option>
          <option value="task">A task</option>
        </select>
      </label>
      {kind === 'task' && (
        <label>
          Factory uid
          <input required value={factory} onInput={(e) => setFactory(e.currentTarget.value)} />
        </label>
      )}
      <label>
        {kind === 'task' ? 'Task uid' : 'Run id'}
        <input required value={id} onInput={(e) => setId(e.currentTarget.value)} />
      </label>
      <button type="submit">Show history</button>
    </form>
  );
}

/** The state as of the moment picked on the time line (the slider walks the events). */
function AsOf({ path, entries }: { path: string; entries: Entry[] }) {
  const [query, setQuery] = useQuery();
  const index = Math.min(Number(query.at ?? entries.length - 1), entries.length - 1);
  const moment = entries[index]!.occurred_at;
  const state = useApi<unknown>(path, { as_of: moment });
  return (
    <section aria-labelledby="as-of">
      <h2 id="as-of">State as of a moment</h2>
      <label for="time-line">
        Time line: after event {index + 1} of {entries.length}
      </label>
      <input
        id="time-line"
        type="range"
        min={0}
        max={entries.length - 1}
        value={index}
        onChange={(e) => setQuery({ at: e.currentTarget.value })}
      />
      <p>
        As of <Time iso={moment} /> ({entries[index]!.type})
      </p>
      <Async state={state} what="Loading the state">
        {(s) => <Json value={s} label="State as of the chosen moment" />}
      </Async>
    </section>
  );
}

function History({ path }: { path: string }) {
  const history = usePaged<Entry>(`${path}/history`, 'entries', (e) => e.id, { limit: 100 });
  return (
    <>
      {history.problem && <ProblemView problem={history.problem} />}
      {history.loading && history.items.length === 0 && <Loading what="Loading the history" />}
      {history.items.length > 0 && (
        <>
          <ol class="events">
            {history.items.map((e) => (
              <li key={e.id}>
                <Time iso={e.occurred_at} /> <strong>{e.type}</strong> by {e.actor.type} <code>{e.actor.uid}</code>
                {e.causation_id ? (
                  <>
                    {' '}
                    caused by <code>{e.causation_id}</code>
                  </>
                ) : (
                  ' (a request)'
                )}
              </li>
            ))}
          </ol>
          <More {...history} />
          <AsOf path={path} entries={history.items} />
        </>
      )}
    </>
  );
}

export default function Audit() {
  const [query] = useQuery();
  const path =
    query.id && (query.kind !== 'task' || query.factory)
      ? query.kind === 'task'
        ? `/factory/${query.factory}/tasks/${query.id}`
        : `/agent/runs/${query.id}`
      : null;
  return (
    <Page title="Audit">
      <Picker />
      {path ? (
        <History key={path} path={path} />
      ) : (
        <Empty>
          Pick a run or a task to read its events and its state at any moment. Run and task pages link here.
        </Empty>
      )}
    </Page>
  );
}
