/** Factories: the team's factories, a page at a time, and a new one. */
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api';
import { useAction, usePaged } from '../hooks';
import { Time } from '../ui/format';
import { More, Page, type FactorySummary } from '../ui/page';
import { ActionResult, Empty, Loading, ProblemView } from '../ui/status';

function NewFactory() {
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [created, create] = useAction(
    () => api<FactorySummary>('/factory', { method: 'POST', body: { name, ...(description ? { description } : {}) } }),
    (f) => `Factory ${f.name} created.`,
  );
  return (
    <form
      class="card"
      onSubmit={async (e) => {
        e.preventDefault();
        const f = await create();
        if (f) route(`/factories/${f.uid}`);
      }}
    >
      <h2>New factory</h2>
      <label for="factory-name">Name</label>
      <input id="factory-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="factory-description">Description</label>
      <input id="factory-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <button type="submit" disabled={created.busy}>
        Create factory
      </button>
      <ActionResult state={created} />
    </form>
  );
}

export default function Factories() {
  const factories = usePaged<FactorySummary & { created_at: string }>('/factory', 'factories', (f) => f.uid, {
    limit: 50,
  });
  return (
    <Page title="Factories">
      {factories.problem && <ProblemView problem={factories.problem} />}
      {factories.items.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {factories.items.map((f) => (
              <tr key={f.uid}>
                <td>
                  <a href={`/factories/${f.uid}`}>{f.name}</a>
                </td>
                <td>{f.description}</td>
                <td>
                  <Time iso={f.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : factories.loading ? (
        <Loading what="Loading factories" />
      ) : (
        !factories.problem && <Empty>No factory yet: create the first one below.</Empty>
      )}
      <More {...factories} />
      <NewFactory />
    </Page>
  );
}
