/**
 * First start on an empty store: a team, its admin and an API key. The `bootstrap` stream is
 * claimed with no_stream first, so two processes starting at once bootstrap once.
 */
import { v4 as uuidv4 } from 'uuid';
import { ConcurrencyError } from '../../src/eventstore/port.js';
import { type CommandContext, metadataOf } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { hashApiKey, newApiKey } from '../shared/api-key.js';
import { userDecider } from '../user/decider.js';
import { userStream } from '../user/events.js';
import { normalizeEmail, reserveEmail } from '../user/register.js';
import { teamDecider } from './decider.js';
import { teamStream } from './events.js';

export interface Bootstrapped {
  team_uid: string;
  user_uid: string;
  /** The generated key, or null when BOOTSTRAP_API_KEY named it. */
  generated_api_key: string | null;
}

export async function bootstrap(rt: Runtime): Promise<Bootstrapped | null> {
  const { BOOTSTRAP_API_KEY, BOOTSTRAP_TEAM_NAME, BOOTSTRAP_USER_EMAIL } = rt.config;
  const team_uid = uuidv4();
  const user_uid = uuidv4();
  const context: CommandContext = {
    now: new Date().toISOString(),
    actor: { type: 'system', uid: 'bootstrap' },
    teams: {},
    team_uid,
    correlation_id: uuidv4(),
    causation_id: null,
    request_id: null,
  };
  try {
    await rt.events.append('bootstrap', [
      { id: uuidv4(), type: 'BootstrapClaimed', data: { team_uid, user_uid }, metadata: metadataOf(context) },
    ], 'no_stream');
  } catch (error) {
    if (error instanceof ConcurrencyError) return null;
    throw error;
  }
  const generated = BOOTSTRAP_API_KEY ? null : newApiKey().key;
  const key = BOOTSTRAP_API_KEY ?? generated!;
  const email = normalizeEmail(BOOTSTRAP_USER_EMAIL);
  await reserveEmail(rt.events, email, user_uid, context);
  await rt.execute(userStream(user_uid), userDecider, {
    type: 'RegisterUser',
    data: { uid: user_uid, email, display_name: 'admin', key_id: uuidv4(), key_hash: hashApiKey(key) },
  }, context);
  await rt.execute(teamStream(team_uid), teamDecider, {
    type: 'CreateTeam',
    data: { uid: team_uid, name: BOOTSTRAP_TEAM_NAME, admin_uid: user_uid },
  }, context);
  return { team_uid, user_uid, generated_api_key: generated };
}
