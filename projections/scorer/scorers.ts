/** Scorers, one document each, as the scorer endpoints answer them (their counts are rollups: scoring-rollups). */
import { projection } from '../../src/projector/projection.js';
import type { ScorerEvent, ScorerFields, ScorerKind } from '../../commands/scorer/events.js';

export interface ScorerDoc extends ScorerFields {
  [field: string]: unknown;
  uid: string;
  factory_uid: string;
  team_uid: string;
  /** Absent on scorers made before kinds: `user`. */
  scorer_kind?: ScorerKind;
  version: number;
  /** Flat, for the self-improvement check's index. */
  self_improvement_enabled: boolean;
  created_by: { type: 'user' | 'agent' | 'system'; uid: string };
  created_at: string;
  updated_at: string;
}

export const scorersProjection = projection<ScorerEvent, ScorerDoc>({
  name: 'scorers',
  version: 1,
  indexes: [
    ['factory_uid', 'created_at'],
    ['team_uid', 'created_at'],
    ['self_improvement_enabled', 'created_at'],
  ],
  on: {
    ScorerCreated: (e, docs) => {
      const { version, created_at: _created, ...fields } = e.data;
      docs.put(e.data.uid, {
        ...fields,
        version,
        self_improvement_enabled: fields.self_improvement.enabled,
        created_by: e.metadata.actor,
        created_at: e.metadata.occurred_at,
        updated_at: e.metadata.occurred_at,
      });
    },
    ScorerUpdated: async (e, docs) => {
      const doc = await docs.get(e.data.uid);
      if (!doc) return;
      const changed = { ...doc, ...e.data.changes };
      docs.put(doc.uid, {
        ...changed,
        version: e.data.version,
        self_improvement_enabled: changed.self_improvement.enabled,
        updated_at: e.metadata.occurred_at,
      });
    },
    ScorerDeleted: (e, docs) => docs.delete(e.data.uid),
  },
});
