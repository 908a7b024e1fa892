/**
 * The scorer a command route acts on: live, one the caller may see, and of the factory in its
 * path (else a 404, whichever it is not).
 */
import type { CommandContext } from '../../src/kernel/handle.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { scorerStream } from './events.js';
import { scorerDecider, visibleScorer } from './scorer-decider.js';

export async function scorerOfFactory(rt: Runtime, factoryUid: string, scorerUid: string, context: CommandContext) {
  const s = visibleScorer(await rt.state(scorerDecider, scorerStream(scorerUid)), scorerUid, context);
  if (s.factory_uid !== factoryUid) throw new NotFound('scorer', scorerUid);
  return s;
}
