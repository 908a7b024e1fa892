/** Every read model the projector keeps. */
import type { AnyProjection } from '../src/projector/projection.js';
import { apiKeysProjection } from './api-keys.js';
import { artifactsProjection } from './artifacts.js';
import { conversationMessagesProjection } from './conversation-messages.js';
import { factoriesProjection } from './factories.js';
import { identitiesProjection } from './identities.js';
import { runsProjection } from './runs.js';
import { runTimelineProjection } from './run-timeline.js';
import { tasksProjection } from './tasks.js';
import { automationsProjection } from './automations.js';
import { teamsProjection } from './teams.js';
import { usersProjection } from './users.js';
import { webhooksProjection } from './webhooks.js';
import { webhookDeliveriesProjection } from './webhook-deliveries.js';

export const projections: readonly AnyProjection[] = [
  apiKeysProjection,
  usersProjection,
  teamsProjection,
  identitiesProjection,
  factoriesProjection,
  runsProjection,
  runTimelineProjection,
  conversationMessagesProjection,
  artifactsProjection,
  tasksProjection,
  automationsProjection,
  webhooksProjection,
  webhookDeliveriesProjection,
];
