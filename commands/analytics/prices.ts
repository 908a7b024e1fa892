/**
 * The price list in force at a point of the log: the newest `ModelCatalogueChanged` before it.
 * Every version of the `models` stream is kept in memory with its position (a handful, each read
 * once), so pricing an event reads only what was appended since.
 */
import { comparePositions, type EventStore, type Position } from '../../src/eventstore/port.js';
import type { Catalogue, ModelEvent } from '../model/events.js';
import { MODELS_STREAM } from '../model/events.js';
import type { PriceList } from './cost-ledger-decider.js';

interface Version {
  position: Position;
  revision: number;
  catalogue: Catalogue;
}

const kept = new WeakMap<EventStore, Version[]>();

/** The price list of the catalogue that was in force when the event at `position` was appended. */
export async function priceListAt(events: EventStore, position: Position): Promise<PriceList> {
  const versions = kept.get(events) ?? [];
  kept.set(events, versions);
  const tail = await events.readStream(MODELS_STREAM, { fromRevision: BigInt(versions.length) });
  for (const e of tail) {
    if (Number(e.revision) !== versions.length) continue; // read concurrently by another pricing
    versions.push({
      position: e.position,
      revision: Number(e.revision),
      catalogue: e.data as ModelEvent['data'] satisfies Catalogue,
    });
  }
  const inForce = versions.findLast((v) => comparePositions(v.position, position) < 0);
  return inForce ? { revision: inForce.revision, catalogue: inForce.catalogue } : { revision: -1, catalogue: null };
}
