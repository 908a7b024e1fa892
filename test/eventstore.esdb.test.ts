import { describe } from 'vitest';
import { openEsdbEventStore } from '../src/eventstore/esdb.js';
import { eventStoreContract } from './contract/eventstore-contract.js';

// Needs a running EventStoreDB (see docker-compose.yml), e.g.
// EVENTSTORE_URL='esdb://localhost:2113?tls=false' npx vitest run test/eventstore.esdb.test.ts
const url = process.env.EVENTSTORE_URL;

describe.skipIf(!url)('EventStoreDB adapter', () => {
  eventStoreContract('esdb', async () => openEsdbEventStore(url!));
  // A store of its own on a shared server, as each API test app gets in CI (EVENTSTORE_STREAM_PREFIX).
  let n = 0;
  eventStoreContract('esdb, prefixed', async () => openEsdbEventStore(url!, `contract${process.pid}x${n++}-`));
});
