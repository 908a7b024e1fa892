/**
 * The factory's figures, rolled up so that a query sums the few rows that tile its range: per
 * factory and unit of time (./grains.ts: hour, six hours, day, week, month), the runs created (by agent type, status, source, model and harness) and
 * the dollars spent (by source, user, agent and model, from the cost ledger's entries, each on the
 * hour it happened).
 *
 * Every row has the one shape of a contribution to the figures: a `run` row is one run's own
 * contribution (what it counts under now), a row of a grain the sum of everything in its unit. A
 * run's status changes move its contribution from its old key to its new one in the sums of the
 * units it was created in, which its own row remembers.
 * Sums are guarded by the position of the last event they took, so an event applied again (a
 * replay) adds nothing twice.
 */
import type {
  CostKeys,
  LedgerEvent,
  RunExecutionPriced,
  RunInferencePriced,
  Usd,
} from '../../commands/analytics/events.js';
import { nextRunState, type RunEvent, type RunState } from '../../commands/run/events.js';
import { positionKey, type RecordedEvent } from '../../src/eventstore/port.js';
import { type Docs, projection } from '../../src/projector/projection.js';
import { own, putOwn } from '../../src/own-keys.js';
import { bucketId, GRAINS, type Grain, grainStart } from './grains.js';

export const UNKNOWN_KEY = 'UNKNOWN';

export interface RunCounts {
  total: number;
  /** Root runs (no parent); `total - root` are sub-runs. */
  root: number;
  agent_type: Record<string, number>;
  status: Record<string, number>;
  /** Root runs only: a sub-run has no source of its own. */
  source: Record<string, number>;
  model: Record<string, number>;
  harness: Record<string, number>;
}

export interface CostSums {
  total: Usd;
  source: Record<string, Usd>;
  user: Record<string, Usd>;
  agent: Record<string, Usd>;
  model: Record<string, Usd>;
}

type RowGrain = 'run' | Grain;

export interface RollupDoc {
  [field: string]: unknown;
  grain: RowGrain;
  factory_uid: string;
  team_uid: string | null;
  /** The start of the row's unit (UTC, ISO 8601); a run row: when the run was created. */
  at: string;
  run_id: string | null;
  runs: RunCounts;
  cost: CostSums;
  /** Sum rows: the position of the last event taken (src/eventstore positionKey). */
  last_position: string | null;
}

const round = (usd: number) => Math.round(usd * 1e9) / 1e9;

const emptyCounts = (): RunCounts => ({
  total: 0,
  root: 0,
  agent_type: {},
  status: {},
  source: {},
  model: {},
  harness: {},
});
const emptyCost = (): CostSums => ({
  total: { inference: 0, compute: 0, platform: 0 },
  source: {},
  user: {},
  agent: {},
  model: {},
});

/** `counts` + sign × `other`, dropping keys that come to nothing. */
function addCounts(counts: RunCounts, other: RunCounts, sign: 1 | -1): RunCounts {
  const map = (a: Record<string, number>, b: Record<string, number>) => {
    const out = { ...a };
    for (const [k, n] of Object.entries(b)) {
      const v = (own(out, k) ?? 0) + sign * n;
      if (v === 0) delete out[k];
      else putOwn(out, k, v);
    }
    return out;
  };
  return {
    total: counts.total + sign * other.total,
    root: counts.root + sign * other.root,
    agent_type: map(counts.agent_type, other.agent_type),
    status: map(counts.status, other.status),
    source: map(counts.source, other.source),
    model: map(counts.model, other.model),
    harness: map(counts.harness, other.harness),
  };
}

const addUsd = (a: Usd | undefined, b: Usd): Usd => ({
  inference: round((a?.inference ?? 0) + b.inference),
  compute: round((a?.compute ?? 0) + b.compute),
  platform: round((a?.platform ?? 0) + b.platform),
});

function addCost(cost: CostSums, delta: Usd, keys: CostKeys): CostSums {
  const at = (map: Record<string, Usd>, key: string) => ({ ...map, [key]: addUsd(own(map, key), delta) });
  return {
    total: addUsd(cost.total, delta),
    source: at(cost.source, keys.source),
    user: at(cost.user, keys.user),
    agent: at(cost.agent, keys.agent),
    model: at(cost.model, keys.model),
  };
}

const sumRow = (grain: Grain, factory_uid: string, team_uid: string | null, at: string): RollupDoc => ({
  grain,
  factory_uid,
  team_uid,
  at,
  run_id: null,
  runs: emptyCounts(),
  cost: emptyCost(),
  last_position: null,
});

/** Changes the rows of every grain of `factory_uid` that hold the moment `at`, once per event. */
async function addToSums(
  docs: Docs<RollupDoc>,
  e: RecordedEvent,
  factory_uid: string,
  team_uid: string | null,
  at: string,
  change: (row: RollupDoc) => Partial<RollupDoc>,
) {
  const position = positionKey(e.position);
  for (const grain of GRAINS) {
    const start = grainStart(at, grain);
    const id = bucketId(grain, factory_uid, start);
    const row = (await docs.get(id)) ?? sumRow(grain, factory_uid, team_uid, start);
    // Position keys sort as the log: a row that took this event (or a later one) takes it no more.
    if (row.last_position !== null && row.last_position >= position) continue;
    docs.put(id, { ...row, ...change(row), last_position: position });
  }
}

const runRowId = (runId: string) => `run:${runId}`;

/** What a run counts under: its own row's `runs`. */
function contribution(d: Extract<RunEvent, { type: 'RunCreated' }>['data'], state: RunState): RunCounts {
  const root = d.parent_run_id === null;
  const model = d.resolved?.model_id ?? (d.config?.model_id as string | undefined) ?? UNKNOWN_KEY;
  const harness = d.resolved?.harness ?? ((d.config?.harness as { type?: string } | undefined)?.type || 'oz');
  const selfImproving = d.source === 'SELF_IMPROVEMENT' || d.source === 'AUTOFIX';
  const agentType = selfImproving ? 'SELF_IMPROVEMENT' : (d.resolved?.agent_type ?? UNKNOWN_KEY);
  return {
    total: 1,
    root: root ? 1 : 0,
    agent_type: { [agentType]: 1 },
    status: { [state]: 1 },
    source: root ? { [d.source]: 1 } : {},
    model: { [model]: 1 },
    harness: { [harness]: 1 },
  };
}

const stateOf = (row: RollupDoc) => Object.keys(row.runs.status)[0] as RunState;

/** `status` with one run moved from `from` to `to` (a status no run has any more is dropped). */
function moveStatus(status: Record<string, number>, from: string, to: string): Record<string, number> {
  const out = { ...status, [to]: (own(status, to) ?? 0) + 1 };
  const left = (own(out, from) ?? 0) - 1;
  if (left === 0) delete out[from];
  else putOwn(out, from, left);
  return out;
}

/** A run's status moved: its contribution moves from the old status to the new. */
async function moveRun(e: RecordedEvent<RunEvent>, docs: Docs<RollupDoc>) {
  const id = runRowId(e.data.run_id);
  const row = await docs.get(id);
  if (!row) return;
  const from = stateOf(row);
  const to = nextRunState(from, e as RunEvent);
  if (to === from) return;
  docs.put(id, { ...row, runs: { ...row.runs, status: { [to]: 1 } } });
  await addToSums(docs, e, row.factory_uid, row.team_uid, row.at, (sum) => ({
    runs: { ...sum.runs, status: moveStatus(sum.runs.status, from, to) },
  }));
}

async function priced(e: RecordedEvent<RunInferencePriced | RunExecutionPriced>, docs: Docs<RollupDoc>) {
  const d = e.data;
  if (d.factory_uid === null) return;
  await addToSums(docs, e, d.factory_uid, d.team_uid, d.at, (sum) => ({ cost: addCost(sum.cost, d.delta, d.keys) }));
}

export const factoryRollupsProjection = projection<RunEvent | LedgerEvent, RollupDoc>({
  name: 'factory_rollups',
  // 2: month rows besides the hour and day rows; 3: six-hour and week rows (issue #34).
  version: 3,
  indexes: [['factory_uid', 'grain', 'at']],
  on: {
    RunCreated: async (e, docs) => {
      const d = e.data;
      const id = runRowId(d.run_id);
      // A sub-run counts for its own factory, else for its tree's. (Applied again, the run's row
      // starts over and its later events move it again; the sums took this event already.)
      const rootRow = d.parent_run_id === null ? null : await docs.get(runRowId(d.root_run_id));
      const factory_uid = d.factory_uid ?? rootRow?.factory_uid ?? null;
      if (factory_uid === null) return;
      const team_uid = d.team_uid ?? d.executing_team_uid;
      const at = e.metadata.occurred_at;
      const runs = contribution(d, 'QUEUED');
      docs.put(id, {
        grain: 'run',
        factory_uid,
        team_uid,
        at,
        run_id: d.run_id,
        runs,
        cost: emptyCost(),
        last_position: null,
      });
      await addToSums(docs, e, factory_uid, team_uid, at, (sum) => ({ runs: addCounts(sum.runs, runs, 1) }));
    },
    RunLeased: moveRun,
    RunLeaseExpired: moveRun,
    RunClaimed: moveRun,
    RunStarted: moveRun,
    RunFinished: moveRun,
    RunCancelled: moveRun,
    RunResumed: moveRun,
    RunWorkerLost: moveRun,
    RunInferencePriced: priced,
    RunExecutionPriced: priced,
  },
});
