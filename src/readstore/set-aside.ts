/** Set-aside events as both adapters store them: flat strings, so bigints survive JSON and BSON. */
import { type EventMetadata, positionKey } from '../eventstore/port.js';
import type { SetAside, SetAsideEvent } from './port.js';

/** The table (SQLite) or collection (MongoDB) beside the checkpoints that keeps them. */
export const SET_ASIDE = 'set_aside';

export interface StoredSetAside {
  /** The position as text that sorts as the log does: with the checkpoint, the record's key. */
  key: string;
  commit: string;
  prepare: string;
  stream: string;
  revision: string;
  event_id: string;
  event_type: string;
  metadata: EventMetadata;
  error: string;
  at: string;
}

export const encodeSetAside = (e: SetAsideEvent): StoredSetAside => ({
  key: positionKey(e.position),
  commit: e.position.commit.toString(),
  prepare: e.position.prepare.toString(),
  stream: e.stream,
  revision: e.revision.toString(),
  event_id: e.event_id,
  event_type: e.event_type,
  metadata: e.metadata,
  error: e.error,
  at: e.at,
});

export const decodeSetAside = (checkpoint: string, s: StoredSetAside): SetAside => ({
  checkpoint,
  position: { commit: BigInt(s.commit), prepare: BigInt(s.prepare) },
  stream: s.stream,
  revision: BigInt(s.revision),
  event_id: s.event_id,
  event_type: s.event_type,
  metadata: s.metadata,
  error: s.error,
  at: s.at,
});
