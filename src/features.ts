/**
 * The composition root: every feature the server and the CLI run, in one list. The only file of
 * `src/` that names a feature; adding a feature is its folder and one line here.
 */
import { analyticsFeature } from '../commands/analytics/index.js';
import { automationFeature } from '../commands/automation/index.js';
import { branchFeature } from '../commands/branch/index.js';
import { benchmarkFeature } from '../commands/benchmark/index.js';
import { conversationFeature } from '../commands/conversation/index.js';
import { environmentFeature } from '../commands/environment/index.js';
import { factoryFeature } from '../commands/factory/index.js';
import { factoryFileFeature } from '../commands/factoryfile/index.js';
import { guardrailFeature } from '../commands/guardrail/index.js';
import { inboxFeature } from '../commands/inbox/index.js';
import { identityFeature } from '../commands/identity/index.js';
import { outboundWebhookFeature } from '../commands/outbound/index.js';
import { modelFeature } from '../commands/model/index.js';
import { runFeature } from '../commands/run/index.js';
import { scheduleFeature } from '../commands/schedule/index.js';
import { scorerFeature } from '../commands/scorer/index.js';
import { secretFeature } from '../commands/secret/index.js';
import { skillFeature } from '../commands/skill/index.js';
import { taskFeature } from '../commands/task/index.js';
import { teamFeature } from '../commands/team/index.js';
import { userFeature } from '../commands/user/index.js';
import { webhookFeature } from '../commands/webhook/index.js';
import { workerFeature } from '../commands/worker/index.js';
import type { Feature } from './feature.js';

export const features: readonly Feature[] = [
  teamFeature,
  userFeature,
  identityFeature,
  modelFeature,
  environmentFeature,
  skillFeature,
  secretFeature,
  factoryFeature,
  runFeature,
  conversationFeature,
  taskFeature,
  workerFeature,
  webhookFeature,
  automationFeature,
  scheduleFeature,
  inboxFeature,
  outboundWebhookFeature,
  scorerFeature,
  factoryFileFeature,
  branchFeature,
  analyticsFeature,
  benchmarkFeature,
  guardrailFeature,
];
