/**
 * How the MongoDB document store lays out its data: a collection per read model, whose documents
 * carry `_id` (their id) and `_pos` (the position of the event that last wrote them), beside the
 * store's own `checkpoints` and `set_aside` collections.
 */
import type { Db, Document, Collection as MongoCollection } from 'mongodb';
import type { Position } from '../eventstore/port.js';
import type { Doc } from './port.js';
import { SET_ASIDE, type StoredSetAside } from './set-aside.js';

/** Positions as 20-digit zero-padded strings: string order equals numeric order up to 2^64. */
export interface StoredPosition {
  commit: string;
  prepare: string;
}
export type Stored = Document & { _id: string; _pos?: StoredPosition };
type SetAsideDoc = StoredSetAside & { checkpoint: string };
interface CheckpointDoc {
  _id: string;
  commit: string;
  prepare: string;
}

const CHECKPOINTS = 'checkpoints';
const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;

export function assertCollectionName(name: string): void {
  if (!COLLECTION_NAME.test(name) || name === CHECKPOINTS || name === SET_ASIDE) {
    throw new Error(`invalid collection name: ${JSON.stringify(name)}`);
  }
}

/** Whether `name` is a read model's collection rather than one of the store's own. */
export const isDocumentCollection = (name: string): boolean =>
  name !== CHECKPOINTS && name !== SET_ASIDE && COLLECTION_NAME.test(name);

export const strip = <T extends Doc>(stored: Stored): T => {
  const { _id, _pos, ...doc } = stored;
  return doc as T;
};

export const toPosition = (c: CheckpointDoc): Position => ({ commit: BigInt(c.commit), prepare: BigInt(c.prepare) });

export interface MongoTables {
  db: Db;
  checkpoints: MongoCollection<CheckpointDoc>;
  setAside: MongoCollection<SetAsideDoc>;
  /** A read model's collection, once its name is checked. */
  docs(name: string): MongoCollection<Stored>;
  saveCheckpoint(name: string, position: Position): Promise<unknown>;
}

export async function openTables(db: Db): Promise<MongoTables> {
  const checkpoints = db.collection<CheckpointDoc>(CHECKPOINTS);
  const setAside = db.collection<SetAsideDoc>(SET_ASIDE);
  await setAside.createIndex({ checkpoint: 1, key: 1 }, { unique: true });
  return {
    db,
    checkpoints,
    setAside,
    docs(name) {
      assertCollectionName(name);
      return db.collection<Stored>(name);
    },
    saveCheckpoint: (name, position) =>
      checkpoints.replaceOne(
        { _id: name },
        { commit: position.commit.toString(), prepare: position.prepare.toString() },
        { upsert: true },
      ),
  };
}
