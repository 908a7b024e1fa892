/**
 * What every benchmark command route starts with: the factory, managed by a person of its team
 * (its agents read benchmarks only), and its live suite; and how a refusal names its fields.
 */
import type { FastifyRequest } from 'fastify';
import { commandContext } from '../../src/http/context.js';
import { type FieldError, Forbidden, InvalidRequest } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { liveFactory } from '../factory/public.js';
import { suiteStream } from './events.js';
import { type SuiteCommand, suiteDecider, visibleSuite } from './suite-decider.js';

export const invalid = (errors: FieldError[]) =>
  new InvalidRequest(errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors);

/** The factory, for the people of its team (its agents read benchmarks only). */
export async function managedFactory(rt: Runtime, req: FastifyRequest, uid: string) {
  const context = commandContext(req);
  const factory = await liveFactory(rt, uid, context);
  if (context.actor.type !== 'user') throw new Forbidden('only people of the team manage benchmarks');
  return { factory, context };
}

export const liveSuite = async (rt: Runtime, factoryUid: string, suiteUid: string, context: CommandContext) =>
  visibleSuite(await rt.state(suiteDecider, suiteStream(factoryUid, suiteUid)), suiteUid, context);

export const executeSuite = (
  rt: Runtime,
  factoryUid: string,
  suiteUid: string,
  command: SuiteCommand,
  context: CommandContext,
) => rt.execute(suiteStream(factoryUid, suiteUid), suiteDecider, command, context);
