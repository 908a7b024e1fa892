import { describe, expect, it } from 'vitest';
import { automationsDecider } from '../../../commands/automation/automations-decider.js';
import type { AutomationEvent, Trigger } from '../../../commands/automation/events.js';
import { replayDecider } from '../../../commands/automation/delivery-replay-decider.js';
import {
  normalizeTrigger,
  triggerErrors,
  MAX_TRIGGERS,
  type TriggerRequest,
} from '../../../commands/automation/triggers.js';
import { Conflict, Forbidden, InvalidRequest, LimitExceeded, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';
import { MAX_AUTOMATIONS_PER_FACTORY } from '../../../commands/automation/resource.js';

const spec = deciderSpec(automationsDecider);
const hook = (uid: string, payload?: Record<string, unknown>): Trigger => ({
  provider: 'webhook',
  event: 'received',
  filter: { webhook_ids: [uid], ...(payload ? { payload } : {}) },
});
const target = { id: 'a-1', factory_uid: 'f-1', team_uid: 't-1' };
const fields = { name: 'Triage', prompt: 'Triage the alert', agent: null, enabled: true, triggers: [hook('w-1')] };
const created: AutomationEvent = { type: 'AutomationCreated', data: { ...target, ...fields } };
const live = { 'w-1': 'live', 'w-2': 'live', 'w-gone': 'deleted' } as const;

describe('automations decider', () => {
  it('creates an automation whose webhook triggers name live webhooks of the factory', () =>
    spec
      .given([])
      .when({
        type: 'CreateAutomation',
        data: { ...target, ...fields, triggers: [hook('w-1'), hook('w-2')] },
        webhooks: live,
      })
      .then([{ type: 'AutomationCreated', data: { id: 'a-1', triggers: [hook('w-1'), hook('w-2')] } }]));

  it('refuses a webhook the factory does not have, or one that was deleted, naming the trigger', () => {
    for (const uid of ['w-other', 'w-gone']) {
      const run = () =>
        automationsDecider.decide(
          {
            type: 'CreateAutomation',
            data: { ...target, ...fields, triggers: [hook('w-1'), hook(uid)] },
            webhooks: live,
          },
          automationsDecider.initialState(),
          userContext(),
        );
      expect(run).toThrow(InvalidRequest);
      try {
        run();
      } catch (error) {
        expect((error as InvalidRequest).errors).toEqual([
          { path: 'body.triggers.1.filter.webhook_ids.0', message: `no webhook ${uid} in this factory` },
        ]);
      }
    }
  });

  it('keeps a trigger of a since-deleted webhook on update, but refuses to add one', () => {
    const named: AutomationEvent = {
      type: 'AutomationCreated',
      data: { ...target, ...fields, triggers: [hook('w-gone')] },
    };
    spec
      .given([named])
      .when({
        type: 'UpdateAutomation',
        data: { ...target, changes: { name: 'Renamed', triggers: [hook('w-gone')] } },
        webhooks: live,
      })
      .then([{ type: 'AutomationUpdated', data: { changes: { name: 'Renamed' } } }]);
    spec
      .given([created])
      .when({ type: 'UpdateAutomation', data: { ...target, changes: { triggers: [hook('w-gone')] } }, webhooks: live })
      .thenThrows(InvalidRequest);
  });

  it('records only the fields that change; an update changing nothing is a no-op', () => {
    spec
      .given([created])
      .when({
        type: 'UpdateAutomation',
        data: { ...target, changes: { name: 'Triage', enabled: false } },
        webhooks: live,
      })
      .then([{ type: 'AutomationUpdated', data: { changes: { enabled: false } } }]);
    spec
      .given([created])
      .when({ type: 'UpdateAutomation', data: { ...target, changes: { prompt: 'Triage the alert' } }, webhooks: live })
      .thenNothingHappened();
  });

  it('deletes, then answers not found; an id is never reused', () => {
    const deleted: AutomationEvent = { type: 'AutomationDeleted', data: { id: 'a-1', factory_uid: 'f-1' } };
    spec
      .given([created])
      .when({ type: 'DeleteAutomation', data: target })
      .then([{ type: 'AutomationDeleted' }]);
    spec.given([created, deleted]).when({ type: 'DeleteAutomation', data: target }).thenThrows(NotFound);
    spec
      .given([created, deleted])
      .when({ type: 'UpdateAutomation', data: { ...target, changes: { name: 'x' } }, webhooks: live })
      .thenThrows(NotFound);
    spec
      .given([created, deleted])
      .when({ type: 'CreateAutomation', data: { ...target, ...fields }, webhooks: live })
      .thenThrows(Conflict);
  });

  it('hides the factory of another team and lets only users manage automations', () => {
    spec
      .given([created])
      .when({ type: 'DeleteAutomation', data: target }, userContext('u-2', { 't-9': 'admin' }))
      .thenThrows(NotFound);
    spec
      .given([created])
      .when({ type: 'DeleteAutomation', data: target }, { ...userContext(), actor: { type: 'agent', uid: 'ag-1' } })
      .thenThrows(Forbidden);
  });

  it(`allows ${MAX_AUTOMATIONS_PER_FACTORY} automations per factory, deleted ones not counted`, () => {
    const many: AutomationEvent[] = Array.from({ length: MAX_AUTOMATIONS_PER_FACTORY }, (_, i) => ({
      type: 'AutomationCreated',
      data: { ...target, ...fields, id: `a-${i}` },
    }));
    spec
      .given(many)
      .when({ type: 'CreateAutomation', data: { ...target, ...fields, id: 'a-new' }, webhooks: live })
      .thenThrows(LimitExceeded);
    spec
      .given([...many, { type: 'AutomationDeleted', data: { id: 'a-0', factory_uid: 'f-1' } }])
      .when({ type: 'CreateAutomation', data: { ...target, ...fields, id: 'a-new' }, webhooks: live })
      .then([{ type: 'AutomationCreated' }]);
  });
});

describe('replay decider', () => {
  const data = {
    replay_id: 'r-1',
    webhook_uid: 'w-1',
    factory_uid: 'f-1',
    team_uid: 't-1',
    delivery_id: 'd-1',
    identity: 'i',
    size_bytes: 2,
    payload_blob: 'b',
    received_at: '2026-01-01T00:00:00.000Z',
  };
  it('records a replay once, by a user of the team', () => {
    const replay = deciderSpec(replayDecider);
    replay
      .given([])
      .when({ type: 'ReplayDelivery', data })
      .then([{ type: 'DeliveryReplayed', data: { replay_id: 'r-1' } }]);
    replay
      .given([{ type: 'DeliveryReplayed', data }])
      .when({ type: 'ReplayDelivery', data })
      .thenThrows(Conflict);
    replay
      .given([])
      .when({ type: 'ReplayDelivery', data }, userContext('u-2', { 't-9': 'member' }))
      .thenThrows(Forbidden);
  });
});

describe('trigger validation (reference notes §5)', () => {
  const valid: TriggerRequest[] = [
    { provider: 'webhook', event: 'received', filter: { webhook_ids: ['w-1'] } },
    {
      provider: 'webhook',
      event: 'received',
      filter: { webhook_ids: { in: ['w-1'] }, payload: { action: ['opened'] } },
    },
    {
      provider: 'github',
      event: 'pull_request_opened',
      filter: { repos: ['acme/api'], pr_numbers: { in: [1, 2], not_in: [3] } },
    },
    { provider: 'slack', event: 'app_mention', filter: null },
    { provider: 'schedule', event: 'cron_fired', schedule: { name: 'nightly', cron: '0 3 * * 1-5' } },
    { provider: 'schedule', event: 'cron_fired', schedule: { cron: '@every 1h30m' } },
    { provider: 'schedule', event: 'cron_fired', filter: { schedule_ids: ['s-1'] } },
    { provider: 'factory', event: 'work_item_stage_changed', filter: { stages: ['REVIEW'] } },
  ];
  it.each(valid.map((t) => [`${t.provider}/${t.event}`, t]))('accepts %s', (_name, t) =>
    expect(triggerErrors([t])).toEqual([]),
  );

  const invalid: Array<[string, TriggerRequest, string]> = [
    ['an unknown provider', { provider: 'gitea', event: 'push' }, 'body.triggers.0.provider'],
    ['an unknown event', { provider: 'github', event: 'star' }, 'body.triggers.0.event'],
    [
      'a camelCase filter key',
      { provider: 'github', event: 'push', filter: { baseBranches: ['main'] } },
      'body.triggers.0.filter.baseBranches',
    ],
    [
      'a webhook trigger without webhook_ids',
      { provider: 'webhook', event: 'received', filter: { payload: { a: 1 } } },
      'body.triggers.0.filter.webhook_ids',
    ],
    [
      'two webhooks in one trigger',
      { provider: 'webhook', event: 'received', filter: { webhook_ids: ['w-1', 'w-2'] } },
      'body.triggers.0.filter.webhook_ids',
    ],
    [
      'not_in on webhook_ids',
      { provider: 'webhook', event: 'received', filter: { webhook_ids: { in: ['w-1'], not_in: ['w-2'] } } },
      'body.triggers.0.filter.webhook_ids.not_in',
    ],
    [
      'a webhook uid that is not a string',
      { provider: 'webhook', event: 'received', filter: { webhook_ids: [7] } },
      'body.triggers.0.filter.webhook_ids.0',
    ],
    [
      'an invalid payload filter',
      { provider: 'webhook', event: 'received', filter: { webhook_ids: ['w-1'], payload: { a: { in: [] } } } },
      'body.triggers.0.filter.payload.a.in',
    ],
    [
      'a value in both in and not_in',
      { provider: 'github', event: 'push', filter: { branches: { in: ['main'], not_in: ['main'] } } },
      'body.triggers.0.filter.branches',
    ],
    [
      'a string pr number',
      { provider: 'github', event: 'pull_request_opened', filter: { pr_numbers: ['1'] } },
      'body.triggers.0.filter.pr_numbers.0',
    ],
    [
      'a schedule with schedule_ids too',
      { provider: 'schedule', event: 'cron_fired', schedule: { cron: '@daily' }, filter: { schedule_ids: ['s'] } },
      'body.triggers.0',
    ],
    [
      'a six-field cron',
      { provider: 'schedule', event: 'cron_fired', schedule: { cron: '0 0 3 * * *' } },
      'body.triggers.0.schedule.cron',
    ],
    [
      'a time zone',
      { provider: 'schedule', event: 'cron_fired', schedule: { cron: 'CRON_TZ=Europe/Paris 0 3 * * *' } },
      'body.triggers.0.schedule.cron',
    ],
    [
      'a schedule on another provider',
      { provider: 'github', event: 'push', schedule: { cron: '@daily' } },
      'body.triggers.0.schedule',
    ],
  ];
  it.each(invalid)('refuses %s', (_name, t, path) => expect(triggerErrors([t]).map((e) => e.path)).toContain(path));

  it('needs one to MAX_TRIGGERS triggers and at most one unnamed inline schedule', () => {
    expect(triggerErrors([])).toEqual([{ path: 'body.triggers', message: expect.any(String) }]);
    const webhook: TriggerRequest = { provider: 'webhook', event: 'received', filter: { webhook_ids: ['w-1'] } };
    expect(triggerErrors(Array.from({ length: MAX_TRIGGERS }, () => webhook))).toEqual([]);
    expect(triggerErrors(Array.from({ length: MAX_TRIGGERS + 1 }, () => webhook))).toHaveLength(1);
    const unnamed: TriggerRequest = { provider: 'schedule', event: 'cron_fired', schedule: { cron: '@daily' } };
    expect(triggerErrors([unnamed, unnamed]).map((e) => e.path)).toEqual(['body.triggers']);
  });

  it('stores webhook_ids as a list of the one uid', () => {
    expect(
      normalizeTrigger({ provider: 'webhook', event: 'received', filter: { webhook_ids: { in: ['w-1'] } } }),
    ).toEqual(hook('w-1'));
    expect(normalizeTrigger({ provider: 'slack', event: 'app_mention', filter: {} })).toEqual({
      provider: 'slack',
      event: 'app_mention',
      filter: null,
    });
  });
});
