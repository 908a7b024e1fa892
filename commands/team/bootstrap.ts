/**
 * First start on an empty store: a team, its admin and an API key. The `bootstrap` stream is
 * claimed with no_stream first, so two processes starting at once bootstrap once.
 */
import { timeOrderedId } from '../../src/ids.js';
import { ConcurrencyError } from '../../src/eventstore/port.js';
import { type CommandContext, metadataOf } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { hashApiKey, newApiKey } from '../../src/http/api-key.js';
import { userDecider, reserveEmail } from '../user/public.js';
import { userStream } from '../user/events.js';
import { teamDecider } from './team-decider.js';
import { teamStream } from './events.js';
import { normalizeEmail } from '../../src/http/schemas.js';

export interface Bootstrapped {
  team_uid: string;
  user_uid: string;
  /** The generated key, or null when BOOTSTRAP_API_KEY named it. */
  generated_api_key: string | null;
}

type Claim = { team_uid: string; user_uid: string };

/** Claims the store for this bootstrap, or reads the claim of an earlier (maybe interrupted) one. */
async function claim(rt: Runtime, context: CommandContext): Promise<Claim> {
  const fresh: Claim = { team_uid: timeOrderedId(), user_uid: timeOrderedId() };
  try {
    await rt.events.append(
      'bootstrap',
      [{ id: timeOrderedId(), type: 'BootstrapClaimed', data: fresh, metadata: metadataOf(context) }],
      'no_stream',
    );
    return fresh;
  } catch (error) {
    if (!(error instanceof ConcurrencyError)) throw error;
    const [claimed] = await rt.events.readStream('bootstrap', { maxCount: 1 });
    return claimed!.data as Claim;
  }
}

const exists = async (rt: Runtime, stream: string) => (await rt.events.readStream(stream, { maxCount: 1 })).length > 0;

/**
 * Each step is skipped when done, so a start that died half-way through bootstrapping is
 * finished by the next start instead of leaving a store nobody can log into.
 */
export async function bootstrap(rt: Runtime): Promise<Bootstrapped | null> {
  const { BOOTSTRAP_API_KEY, BOOTSTRAP_TEAM_NAME, BOOTSTRAP_USER_EMAIL } = rt.config;
  const context: CommandContext = {
    now: new Date().toISOString(),
    actor: { type: 'system', uid: 'bootstrap' },
    teams: {},
    team_uid: null,
    correlation_id: timeOrderedId(),
    causation_id: null,
    request_id: null,
  };
  const { team_uid, user_uid } = await claim(rt, context);
  const userMissing = !(await exists(rt, userStream(user_uid)));
  const teamMissing = !(await exists(rt, teamStream(team_uid)));
  if (!userMissing && !teamMissing) return null;

  // The user, with its key, comes last: whenever a key exists, this start is the one showing it.
  if (teamMissing) {
    await rt.execute(
      teamStream(team_uid),
      teamDecider,
      {
        type: 'CreateTeam',
        data: { uid: team_uid, name: BOOTSTRAP_TEAM_NAME, admin_uid: user_uid },
      },
      { ...context, team_uid },
    );
  }
  let generated: string | null = null;
  if (userMissing) {
    generated = BOOTSTRAP_API_KEY ? null : newApiKey().key;
    const email = normalizeEmail(BOOTSTRAP_USER_EMAIL);
    await reserveEmail(rt.events, email, user_uid, context);
    await rt.execute(
      userStream(user_uid),
      userDecider,
      {
        type: 'RegisterUser',
        data: {
          uid: user_uid,
          email,
          display_name: 'admin',
          key: {
            key_id: timeOrderedId(),
            key_hash: hashApiKey(BOOTSTRAP_API_KEY ?? generated!),
            label: 'bootstrap',
            // Four characters of a generated key tell nothing; of one the operator chose, they might.
            last4: generated ? generated.slice(-4) : null,
            expires_at: null,
          },
        },
      },
      context,
    );
  }
  return { team_uid, user_uid, generated_api_key: generated };
}
