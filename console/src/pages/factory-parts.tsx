/** A factory's agents, automations (with their triggers) and applied definitions. */
import { useApi } from '../hooks';
import { Json, Time } from '../ui/format';
import { Async, Empty } from '../ui/status';

interface Agent {
  uid: string;
  name: string;
  agent_type: string;
  base_model?: string;
  available?: boolean;
}

export function Agents({ factoryUid }: { factoryUid: string }) {
  const agents = useApi<{ agents: Agent[] }>('/agent/identities', { factory_uid: factoryUid });
  return (
    <section aria-labelledby="agents">
      <h2 id="agents">Agents</h2>
      <Async state={agents} what="Loading agents">
        {({ agents: list }) =>
          list.length === 0 ? (
            <Empty>
              No agents: create one with <code>POST /api/v1/agent/identities</code> and this factory's uid, or apply a
              definition that declares them.
            </Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Model</th>
                </tr>
              </thead>
              <tbody>
                {list.map((a) => (
                  <tr key={a.uid}>
                    <td>{a.name}</td>
                    <td>{a.agent_type}</td>
                    <td>{a.base_model ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Async>
    </section>
  );
}

export interface Automation {
  id: string;
  name: string;
  enabled: boolean;
  prompt: string;
  triggers: Array<{ provider: string; event: string; filter?: unknown; active?: boolean }>;
}

export function AutomationList({ list }: { list: Automation[] }) {
  if (list.length === 0)
    return <Empty>No automations: create one to start runs when a webhook delivery or a schedule fires.</Empty>;
  return (
    <ul class="cards">
      {list.map((a) => (
        <li key={a.id} class="card">
          <h3>
            {a.name} <span class="badge">{a.enabled ? 'enabled' : 'disabled'}</span>
          </h3>
          <p>{a.prompt}</p>
          <ul>
            {a.triggers.map((t, i) => (
              <li key={i}>
                Trigger: {t.provider} {t.event} {t.active === false ? '(inactive)' : ''}
                {t.filter !== undefined && <Json value={t.filter} label={`Filter of trigger ${i + 1}`} />}
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

export function Automations({ factoryUid }: { factoryUid: string }) {
  const automations = useApi<{ automations: Automation[] }>(`/factory/${factoryUid}/automations`);
  return (
    <section aria-labelledby="automations">
      <h2 id="automations">Automations</h2>
      <Async state={automations} what="Loading automations">
        {({ automations: list }) => <AutomationList list={list} />}
      </Async>
    </section>
  );
}

interface Version {
  version: number;
  state: string;
  branch_name?: string;
  applied_at?: string;
  file_count?: number;
}

export function Definitions({ factoryUid }: { factoryUid: string }) {
  const versions = useApi<{ versions: Version[] }>(`/factory/${factoryUid}/definition/versions`, { limit: 50 });
  return (
    <section aria-labelledby="definitions">
      <h2 id="definitions">Definitions</h2>
      <Async state={versions} what="Loading definitions">
        {({ versions: list }) =>
          list.length === 0 ? (
            <Empty>No definition applied yet: propose one as a branch (Branches), then apply it.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">State</th>
                  <th scope="col">Branch</th>
                  <th scope="col">Files</th>
                  <th scope="col">Applied</th>
                </tr>
              </thead>
              <tbody>
                {list.map((v) => (
                  <tr key={v.version}>
                    <td>{v.version}</td>
                    <td>{v.state}</td>
                    <td>{v.branch_name ?? '—'}</td>
                    <td>{v.file_count ?? '—'}</td>
                    <td>
                      <Time iso={v.applied_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Async>
    </section>
  );
}
