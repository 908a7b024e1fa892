/** Runs the contract against a real MongoDB when MONGODB_URL points at one (e.g. in CI). */
import { describe } from 'vitest';
import { openMongoDocumentStore } from '../src/readstore/mongo.js';
import { documentStoreContract } from './contract/documentstore-contract.js';

const url = process.env.MONGODB_URL;

describe.skipIf(!url)('mongo document store', () => {
  // Collection names are random per test, so a shared database is fine.
  documentStoreContract('mongo', () => openMongoDocumentStore(url!, process.env.MONGODB_DB ?? 'shopfloor_test'));
});
