/**
 * The rules of a scorer: who may manage it (the people of its factory's team), what makes a
 * valid one (classifications unique, one passing and one failing at the threshold, a scope that
 * names agents exactly when it is `selected_agents`), and that every change is a new version.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Conflict, type FieldError, Forbidden, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { ScorerCreatedData, ScorerEvent, ScorerFields } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

export type ScorerCommand =
  | { type: 'CreateScorer'; data: ScorerCreatedData }
  | { type: 'UpdateScorer'; data: { uid: string; changes: Partial<ScorerFields> } }
  | { type: 'DeleteScorer'; data: { uid: string } };

export type LiveScorer = ScorerCreatedData & { status: 'live'; version: number; created_at: string };

export type ScorerState =
  | { status: 'none' }
  | { status: 'deleted'; uid: string; factory_uid: string; team_uid: string }
  | LiveScorer;

/** Why these fields make no valid scorer, each naming its field (relative to the body); [] when they do. */
export function scorerProblems(f: ScorerFields): FieldError[] {
  const problems: FieldError[] = [];
  const add = (path: string, message: string) => problems.push({ path: `body.${path}`, message });
  const values = f.allowed_classifications.map((c) => c.value);
  const repeated = values.find((v, i) => values.indexOf(v) !== i);
  if (repeated !== undefined) add('allowed_classifications', `classification values must be unique (${repeated})`);
  if (!f.allowed_classifications.some((c) => c.score >= f.threshold))
    add('allowed_classifications', 'at least one classification must score at or above the threshold');
  if (!f.allowed_classifications.some((c) => c.score < f.threshold))
    add('allowed_classifications', 'at least one classification must score below the threshold');
  if (f.scope_mode === 'selected_agents' && f.agents.length === 0)
    add('agent_uids', 'selected_agents needs at least one agent (agents or agent_uids)');
  if (f.scope_mode === 'all_agents' && f.agents.length > 0)
    add('agent_uids', 'all_agents takes no agents: leave agents and agent_uids empty');
  const uids = f.agents.map((a) => a.uid);
  const twice = uids.find((u, i) => uids.indexOf(u) !== i);
  if (twice !== undefined) add('agent_uids', `agent ${twice} is named twice`);
  return problems;
}

function assertValid(fields: ScorerFields): void {
  const problems = scorerProblems(fields);
  if (problems.length) throw new InvalidRequest(problems.map((p) => p.message).join('; '), problems);
}

/** Scorers are managed by the people of their team; agents may read them only. */
function assertManager(teamUid: string, context: DecideContext): void {
  if (context.actor.type === 'system') return;
  if (!ownsKey(context.teams, teamUid)) throw new NotFound('factory');
  if (context.actor.type !== 'user') throw new Forbidden('only people of the team manage scorers');
}

/** What a benchmark-managed scorer lets people change: its words, its judge's model and configuration. */
const MANAGED_EDITABLE: ReadonlySet<string> = new Set([
  'name',
  'description',
  'scoring_prompt',
  'model_id',
  'agent_config',
]);

const managed = (s: LiveScorer) => (s.scorer_kind ?? 'user') !== 'user';

/** A scorer of another team does not exist for the caller. */
export function visibleScorer(state: ScorerState, uid: string, context: Pick<DecideContext, 'actor' | 'teams'>) {
  if (state.status !== 'live' || (context.actor.type !== 'system' && !ownsKey(context.teams, state.team_uid)))
    throw new NotFound('scorer', uid);
  return state;
}

const fieldsOf = (s: LiveScorer): ScorerFields => ({
  name: s.name,
  description: s.description,
  scoring_prompt: s.scoring_prompt,
  model_id: s.model_id,
  threshold: s.threshold,
  allowed_classifications: s.allowed_classifications,
  scope_mode: s.scope_mode,
  agents: s.agents,
  sampling_rate: s.sampling_rate,
  agent_config: s.agent_config,
  self_improvement: s.self_improvement,
});

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const scorerDecider: Decider<ScorerCommand, ScorerEvent, ScorerState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'ScorerCreated': {
        return { status: 'live', ...event.data };
      }
      case 'ScorerUpdated':
        return state.status === 'live' ? { ...state, ...event.data.changes, version: event.data.version } : state;
      case 'ScorerDeleted':
        return state.status === 'live'
          ? { status: 'deleted', uid: state.uid, factory_uid: state.factory_uid, team_uid: state.team_uid }
          : state;
    }
  },

  decide: (command, state, context) => {
    switch (command.type) {
      case 'CreateScorer': {
        if (state.status !== 'none') throw new Conflict(`scorer ${command.data.uid} exists`);
        assertManager(command.data.team_uid, context);
        if ((command.data.scorer_kind ?? 'user') !== 'user' && context.actor.type !== 'system')
          throw new Forbidden('benchmark-managed scorers are made by the benchmarks themselves');
        assertValid(command.data);
        return [{ type: 'ScorerCreated', data: { ...command.data, version: 1, created_at: context.now } }];
      }
      case 'UpdateScorer': {
        const s = visibleScorer(state, command.data.uid, context);
        assertManager(s.team_uid, context);
        const current = fieldsOf(s);
        const changes = Object.fromEntries(
          Object.entries(command.data.changes).filter(
            ([k, v]) => v !== undefined && !same(v, current[k as keyof ScorerFields]),
          ),
        ) as Partial<ScorerFields>;
        if (Object.keys(changes).length === 0) return [];
        const fixed = Object.keys(changes).filter((k) => !MANAGED_EDITABLE.has(k));
        if (managed(s) && fixed.length && context.actor.type !== 'system')
          throw new Conflict(
            `a benchmark-managed scorer keeps its ${fixed.join(', ')}: only its name, description, rubric, model and judge configuration change`,
            'managed_scorer',
          );
        assertValid({ ...current, ...changes });
        return [{ type: 'ScorerUpdated', data: { uid: s.uid, version: s.version + 1, changes } }];
      }
      case 'DeleteScorer': {
        const s = visibleScorer(state, command.data.uid, context);
        assertManager(s.team_uid, context);
        if (managed(s)) throw new Conflict('a benchmark-managed scorer cannot be deleted', 'managed_scorer');
        return [{ type: 'ScorerDeleted', data: { uid: s.uid, factory_uid: s.factory_uid, team_uid: s.team_uid } }];
      }
    }
  },
};
