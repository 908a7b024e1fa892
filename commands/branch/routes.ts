/**
 * POST /factory/{factory_uid}/branches and PUT …/{branch_uid}/files (extensions: propose a
 * definition), DELETE …/{branch_uid} (retire it) and POST …/{branch_uid}/apply (make it the
 * factory's definition: one version, whole or not at all). GET is in queries/branch/branches.ts.
 */
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { Conflict, type FieldError, Forbidden, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { branchesProjection } from '../../projections/branch/branches.js';
import { type LiveFactory, liveFactory } from '../factory/public.js';
import {
  canonicalJson,
  resourceHashes,
  sha256,
  type Diagnostic,
  FILES_BODY_LIMIT,
  filesSchema,
  type FactoryFile,
  validateFiles,
} from '../factoryfile/public.js';
import { carryOut } from './definition-carry-out.js';
import { branchDecider, branchNameDecider, type BranchState, definitionDecider } from './branch-decider.js';
import { type BranchContent, branchNameStream, branchStream, definitionStream } from './events.js';
import { planVersion } from './plan.js';
import { assertBranchesEnabled, branchParams, branchStatus, branchStatusOf } from './resource.js';

/** Diagnostics kept in a branch's events (the count says how many there were). */
const MAX_STORED_DIAGNOSTICS = 100;
const APPLY_ATTEMPTS = 3;

const branchName = z
  .string()
  .max(100)
  .regex(/^(?![-/.])(?!.*\/\/)(?!.*\.\.)[A-Za-z0-9._/-]{1,100}$/, 'letters, digits, . _ - and /, as a git branch name');

const createBody = z.object({ name: branchName, files: filesSchema }).strict();
const filesBody = z.object({ files: filesSchema }).strict();
/** Apply takes no target: it applies the branch's current content. */
const applyBody = z.object({}).strict().nullish();

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

/** Validates files and stores them as blobs: the content a branch event records. */
async function contentOf(rt: Runtime, files: readonly FactoryFile[], baseVersion: number): Promise<BranchContent> {
  const validation = validateFiles(files);
  const stored = [];
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const bytes = Buffer.from(f.content, 'utf8');
    stored.push({ path: f.path, sha256: await rt.blobs.put(bytes), size_bytes: bytes.length });
  }
  return {
    files: stored,
    content_hash: sha256(canonicalJson(stored.map((f) => [f.path, f.sha256]))),
    schema_version: validation.schema_version,
    valid: validation.valid,
    diagnostics: validation.diagnostics.slice(0, MAX_STORED_DIAGNOSTICS),
    diagnostic_count: validation.diagnostics.length,
    resources: validation.definition ? resourceHashes(validation.definition) : {},
    base_version: baseVersion,
  };
}

/** The files of a branch, read back from their blobs. */
async function filesOf(rt: Runtime, content: BranchContent): Promise<FactoryFile[]> {
  return Promise.all(
    content.files.map(async (f) => {
      const bytes = await rt.blobs.read(f.sha256);
      if (!bytes) throw new Error(`the blob ${f.sha256} of ${f.path} is missing`);
      return { path: f.path, content: bytes.toString('utf8') };
    }),
  );
}

export default function branchRoutes(api: Api, rt: Runtime): void {
  const tags = ['factory branches'];
  const branches = rt.readModel(branchesProjection);
  const status = async (uid: string) => branchStatusOf(rt, (await branches.get(uid))!);
  const liveVersion = async (factoryUid: string) =>
    (await rt.state(definitionDecider, definitionStream(factoryUid))).version;
  const nameStream = (factoryUid: string, name: string) => branchNameStream(factoryUid, sha256(name).slice(0, 32));

  /** The branch of this factory, live or retired, as its stream tells it; 404 to other teams. */
  const branchOf = async (factory: LiveFactory, uid: string): Promise<Exclude<BranchState, { status: 'none' }>> => {
    const branch = await rt.state(branchDecider, branchStream(uid));
    if (branch.status === 'none' || branch.factory_uid !== factory.uid) throw new NotFound('branch', uid);
    return branch;
  };

  api.post(
    '/factory/:factory_uid/branches',
    {
      bodyLimit: FILES_BODY_LIMIT,
      schema: {
        params: branchParams.pick({ factory_uid: true }),
        body: createBody,
        response: { 201: branchStatus },
        tags,
      },
      config: { idempotent: true },
    },
    async (req, reply) => {
      assertBranchesEnabled(rt.config);
      const context = commandContext(req);
      const factory = await liveFactory(rt, req.params.factory_uid, context);
      const { name, files } = req.body;
      const content = await contentOf(rt, files, await liveVersion(factory.uid));
      const uid = timeOrderedId();
      const { holder } = await rt.state(branchNameDecider, nameStream(factory.uid, name));
      const holderRetired = holder !== null && (await rt.state(branchDecider, branchStream(holder))).status !== 'live';
      await rt.handle(
        nameStream(factory.uid, name),
        branchNameDecider,
        { type: 'ReserveBranchName', data: { factory_uid: factory.uid, name, branch_uid: uid }, holderRetired },
        context,
      );
      await rt.execute(
        branchStream(uid),
        branchDecider,
        { type: 'CreateBranch', data: { uid, factory_uid: factory.uid, team_uid: factory.team_uid, name, ...content } },
        context,
      );
      return reply.code(201).send(await status(uid));
    },
  );

  api.put(
    '/factory/:factory_uid/branches/:branch_uid/files',
    {
      bodyLimit: FILES_BODY_LIMIT,
      schema: { params: branchParams, body: filesBody, response: { 200: branchStatus }, tags },
    },
    async (req) => {
      assertBranchesEnabled(rt.config);
      const context = commandContext(req);
      const factory = await liveFactory(rt, req.params.factory_uid, context);
      const branch = await branchOf(factory, req.params.branch_uid);
      const content = await contentOf(rt, req.body.files, await liveVersion(factory.uid));
      await rt.execute(
        branchStream(branch.uid),
        branchDecider,
        { type: 'ReplaceBranchFiles', data: { uid: branch.uid, ...content } },
        context,
      );
      return status(branch.uid);
    },
  );

  api.delete(
    '/factory/:factory_uid/branches/:branch_uid',
    { schema: { params: branchParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      assertBranchesEnabled(rt.config);
      const context = commandContext(req);
      const factory = await liveFactory(rt, req.params.factory_uid, context);
      const branch = await branchOf(factory, req.params.branch_uid);
      await rt.handle(
        branchStream(branch.uid),
        branchDecider,
        { type: 'DeleteBranch', data: { uid: branch.uid } },
        context,
      );
      // Its name is free again (a retired holder's name is also taken over by the next create).
      await rt.execute(
        nameStream(factory.uid, branch.name),
        branchNameDecider,
        { type: 'ReleaseBranchName', data: { factory_uid: factory.uid, name: branch.name, branch_uid: branch.uid } },
        context,
      );
      return reply.code(204).send(null);
    },
  );

  api.post(
    '/factory/:factory_uid/branches/:branch_uid/apply',
    { schema: { params: branchParams, body: applyBody, response: { 200: branchStatus }, tags } },
    async (req) => {
      assertBranchesEnabled(rt.config);
      const context = commandContext(req);
      const factory = await liveFactory(rt, req.params.factory_uid, context);
      const branch = await branchOf(factory, req.params.branch_uid);
      if (context.actor.type !== 'user') throw new Forbidden('only users apply a definition');
      if (branch.status === 'deleted')
        throw new Conflict(`branch ${branch.uid} is retired (deleted)`, 'branch_deleted');
      for (let attempt = 1; ; attempt++) {
        // A version left pending (a crash, another process) is carried out before the next is planned.
        await carryOut(rt, factory.uid);
        const current = await rt.state(definitionDecider, definitionStream(factory.uid));
        if (current.content_hash === branch.content.content_hash) break; // the same content: nothing changes
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
        break;
      }
      return status(branch.uid);
    },
  );
}
