/**
 * Applying a branch: its content planned as a version against the definition in force (plan.ts),
 * decided, then carried out (definition-carry-out.ts); planned again when another apply decided
 * first. A definition that cannot be applied is a 400 with its diagnostics: the factory keeps its own.
 */
import { Conflict, type FieldError, InvalidRequest } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import type { LiveFactory } from '../factory/public.js';
import { type Diagnostic, validateFiles } from '../factoryfile/public.js';
import { filesOf, MAX_STORED_DIAGNOSTICS } from './branch-content.js';
import { type BranchState, definitionDecider } from './branch-decider.js';
import { carryOut } from './definition-carry-out.js';
import { definitionStream } from './events.js';
import { planVersion } from './plan.js';

const APPLY_ATTEMPTS = 3;

/** A definition that cannot be applied: 400, its diagnostics in the problem. */
class InvalidDefinition extends InvalidRequest {
  constructor(detail: string, diagnostics: Diagnostic[]) {
    const errors: FieldError[] = diagnostics
      .slice(0, MAX_STORED_DIAGNOSTICS)
      .map((d) => ({ path: `${d.path}:${d.line}:${d.column}`, message: `${d.code} ${d.message}` }));
    super(detail, errors);
    this.extensions = { diagnostics };
  }
}

/** Makes the branch's content the factory's definition: one version, whole or not at all. */
export async function applyBranch(
  rt: Runtime,
  factory: LiveFactory,
  branch: Exclude<BranchState, { status: 'none' }>,
  context: CommandContext,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    // A version left pending (a crash, another process) is carried out before the next is planned.
    await carryOut(rt, factory.uid);
    const current = await rt.state(definitionDecider, definitionStream(factory.uid));
    if (current.content_hash === branch.content.content_hash) return; // the same content: nothing changes
    const validation = validateFiles(await filesOf(rt, branch.content));
    if (!validation.definition)
      throw new InvalidDefinition(
        'the branch is not a valid definition: the factory keeps its definition',
        validation.diagnostics,
      );
    const plan = await planVersion(rt, factory, branch, validation.definition, validation.state_dependent, current);
    if (!plan.planned)
      throw new InvalidDefinition(
        'the definition cannot be applied to this factory: it keeps its definition',
        plan.diagnostics,
      );
    try {
      await rt.handle(
        definitionStream(factory.uid),
        definitionDecider,
        { type: 'ApplyDefinition', data: plan.planned, base_version: current.version },
        context,
      );
    } catch (error) {
      // Another apply decided first: plan again against it.
      if (error instanceof Conflict && error.retryable && attempt < APPLY_ATTEMPTS) continue;
      throw error;
    }
    await carryOut(rt, factory.uid);
    return;
  }
}
