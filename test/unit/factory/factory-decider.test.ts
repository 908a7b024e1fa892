import { describe, it } from 'vitest';
import { factoryDecider } from '../../../commands/factory/factory-decider.js';
import type { FactoryEvent } from '../../../commands/factory/events.js';
import { Conflict, Forbidden, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

const spec = deciderSpec(factoryDecider);
const fields = { name: 'Payments', alias: 'pay', description: null, repositories: [] };
const created: FactoryEvent = { type: 'FactoryCreated', data: { uid: 'f-1', team_uid: 't-1', ...fields } };
const deleted: FactoryEvent = { type: 'FactoryDeleted', data: { uid: 'f-1' } };

describe('factory decider', () => {
  it('creates a factory in a team of the caller', () =>
    spec
      .given([])
      .when({ type: 'CreateFactory', data: { uid: 'f-1', team_uid: 't-1', ...fields } })
      .then([{ type: 'FactoryCreated' }]));

  it('refuses to create in a team the caller is not in', () =>
    spec
      .given([])
      .when({ type: 'CreateFactory', data: { uid: 'f-1', team_uid: 't-2', ...fields } })
      .thenThrows(Forbidden));

  it('refuses to create a factory twice', () =>
    spec
      .given([created])
      .when({ type: 'CreateFactory', data: { uid: 'f-1', team_uid: 't-1', ...fields } })
      .thenThrows(Conflict));

  it('records only the fields that change', () =>
    spec
      .given([created])
      .when({ type: 'UpdateFactory', data: { uid: 'f-1', changes: { name: 'Payments', alias: 'p2' } } })
      .then([{ type: 'FactoryUpdated', data: { changes: { alias: 'p2' } } }]));

  it('treats an update that changes nothing as a valid no-op', () =>
    spec
      .given([created])
      .when({ type: 'UpdateFactory', data: { uid: 'f-1', changes: { name: 'Payments' } } })
      .thenNothingHappened());

  it('hides a factory of another team as not found', () =>
    spec
      .given([created])
      .when({ type: 'DeleteFactory', data: { uid: 'f-1' } }, userContext('u-2', { 't-9': 'admin' }))
      .thenThrows(NotFound));

  it('answers not found for a deleted factory', () =>
    spec
      .given([created, deleted])
      .when({ type: 'UpdateFactory', data: { uid: 'f-1', changes: { name: 'x' } } })
      .thenThrows(NotFound));

  it('lets only users manage factories', () =>
    spec
      .given([created])
      .when({ type: 'DeleteFactory', data: { uid: 'f-1' } }, { ...userContext(), actor: { type: 'agent', uid: 'a-1' } })
      .thenThrows(Forbidden));
});
