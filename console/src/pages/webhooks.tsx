/** Webhooks: a factory's webhooks and automations with their triggers, and the team's outbound webhooks. */
import { useApi } from '../hooks';
import { isAdmin, useSession } from '../session';
import { Time } from '../ui/format';
import { FactoryPicker, Page } from '../ui/page';
import { Async, Empty } from '../ui/status';
import { type Automation, AutomationList } from './factory-parts';

interface Webhook {
  uid: string;
  name: string;
  authMode: string;
  enabled: boolean;
  ingress_url: string;
  created_at: string;
}

function FactoryWebhooks({ factoryUid }: { factoryUid: string }) {
  const webhooks = useApi<{ webhooks: Webhook[] }>(`/factory/${factoryUid}/webhooks`);
  const automations = useApi<{ automations: Automation[] }>(`/factory/${factoryUid}/automations`);
  return (
    <>
      <h2>Webhooks</h2>
      <Async state={webhooks} what="Loading webhooks">
        {({ webhooks: list }) =>
          list.length === 0 ? (
            <Empty>
              No webhooks: create one with <code>POST /api/v1/factory/{'{uid}'}/webhooks</code> to receive events.
            </Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Authentication</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Ingress URL</th>
                </tr>
              </thead>
              <tbody>
                {list.map((w) => (
                  <tr key={w.uid}>
                    <td>
                      <a href={`/factories/${factoryUid}/webhooks/${w.uid}`}>{w.name}</a>
                    </td>
                    <td>{w.authMode}</td>
                    <td>{w.enabled ? 'yes' : 'no'}</td>
                    <td>
                      <code class="wrap">{w.ingress_url}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Async>
      <h2>Automations and triggers</h2>
      <Async state={automations} what="Loading automations">
        {({ automations: list }) => <AutomationList list={list} />}
      </Async>
    </>
  );
}

interface Outbound {
  uid: string;
  url: string;
  description?: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason?: string | null;
  created_at: string;
}

function OutboundWebhooks({ teamUid }: { teamUid: string }) {
  const outbound = useApi<{ outbound_webhooks: Outbound[] }>(`/teams/${teamUid}/outbound-webhooks`);
  return (
    <>
      <h2>Outbound webhooks</h2>
      <Async state={outbound} what="Loading outbound webhooks">
        {({ outbound_webhooks: list }) =>
          list.length === 0 ? (
            <Empty>
              No outbound webhooks: an admin adds one with{' '}
              <code>POST /api/v1/teams/{'{team_uid}'}/outbound-webhooks</code>.
            </Empty>
          ) : (
            <ul class="cards">
              {list.map((o) => (
                <li key={o.uid} class="card">
                  <a href={`/outbound-webhooks/${o.uid}`}>{o.description || o.url}</a>{' '}
                  <span class="badge">
                    {o.enabled ? 'enabled' : `disabled${o.disabled_reason ? `: ${o.disabled_reason}` : ''}`}
                  </span>
                  <p class="muted">
                    <code class="wrap">{o.url}</code> · {o.event_types.join(', ')} · since <Time iso={o.created_at} />
                  </p>
                </li>
              ))}
            </ul>
          )
        }
      </Async>
    </>
  );
}

export default function Webhooks() {
  const session = useSession();
  return (
    <Page title="Webhooks">
      <FactoryPicker>{(f) => <FactoryWebhooks key={f.uid} factoryUid={f.uid} />}</FactoryPicker>
      {session.team && isAdmin(session) && <OutboundWebhooks teamUid={session.team.uid} />}
    </Page>
  );
}
