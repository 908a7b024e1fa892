/** Factory: the task board by stage, and the factory's agents, automations, definitions and branches. */
import { useRoute } from 'preact-iso';
import { useApi } from '../hooks';
import { Page, useQuery, type FactorySummary } from '../ui/page';
import { Async } from '../ui/status';
import { Board } from './factory-board';
import { Branches } from './factory-branches';
import { Agents, Automations, Definitions } from './factory-parts';

const TABS = [
  ['board', 'Task board'],
  ['agents', 'Agents'],
  ['automations', 'Automations'],
  ['definitions', 'Definitions'],
  ['branches', 'Branches'],
] as const;

function Tabs({ current }: { current: string }) {
  return (
    <nav aria-label="Factory sections" class="tabs">
      <ul class="inline">
        {TABS.map(([id, label]) => (
          <li key={id}>
            <a href={`?tab=${id}`} aria-current={current === id ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export default function Factory() {
  const { params } = useRoute();
  const [query] = useQuery();
  const uid = params.factoryUid!;
  const tab = TABS.some(([id]) => id === query.tab) ? query.tab! : 'board';
  const factory = useApi<FactorySummary>(`/factory/${uid}`);
  return (
    <Page title={factory.data?.name ?? 'Factory'}>
      <Async state={factory} what="Loading the factory">
        {(f) => (
          <>
            {f.description && <p>{f.description}</p>}
            <Tabs current={tab} />
            {tab === 'board' && <Board factoryUid={uid} />}
            {tab === 'agents' && <Agents factoryUid={uid} />}
            {tab === 'automations' && <Automations factoryUid={uid} />}
            {tab === 'definitions' && <Definitions factoryUid={uid} />}
            {tab === 'branches' && <Branches factoryUid={uid} />}
          </>
        )}
      </Async>
    </Page>
  );
}
