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
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { branchesProjection } from '../../projections/branch/branches.js';
import { type LiveFactory, liveFactory } from '../factory/public.js';
import { sha256, FILES_BODY_LIMIT, filesSchema } from '../factoryfile/public.js';
import { applyBranch } from './apply-branch.js';
import { contentOf } from './branch-content.js';
import { branchDecider, branchNameDecider, type BranchState, definitionDecider } from './branch-decider.js';
import { branchNameStream, branchStream, definitionStream } from './events.js';
import { assertBranchesEnabled, branchParams, branchStatus, branchStatusOf } from './resource.js';

const branchName = z
  .string()
  .max(100)
  .regex(/^(?![-/.])(?!.*\/\/)(?!.*\.\.)[A-Za-z0-9._/-]{1,100}$/, 'letters, digits, . _ - and /, as a git branch name');

const createBody = z.object({ name: branchName, files: filesSchema }).strict();
const filesBody = z.object({ files: filesSchema }).strict();
/** Apply takes no target: it applies the branch's current content. */
const applyBody = z.object({}).strict().nullish();

const tags = ['factory branches'];

/** What the branch routes share: the status they answer, and the factory's branches and versions. */
function branchRouting(rt: Runtime) {
  const branches = rt.readModel(branchesProjection);
  return {
    rt,
    status: async (uid: string) => branchStatusOf(rt, (await branches.get(uid))!),
    liveVersion: async (factoryUid: string) =>
      (await rt.state(definitionDecider, definitionStream(factoryUid))).version,
    nameStream: (factoryUid: string, name: string) => branchNameStream(factoryUid, sha256(name).slice(0, 32)),
    /** The branch of this factory, live or retired, as its stream tells it; 404 to other teams. */
    branchOf: async (factory: LiveFactory, uid: string): Promise<Exclude<BranchState, { status: 'none' }>> => {
      const branch = await rt.state(branchDecider, branchStream(uid));
      if (branch.status === 'none' || branch.factory_uid !== factory.uid) throw new NotFound('branch', uid);
      return branch;
    },
  };
}

type BranchRouting = ReturnType<typeof branchRouting>;

export default function branchRoutes(api: Api, rt: Runtime): void {
  const routing = branchRouting(rt);
  createBranchRoute(api, routing);
  replaceFilesRoute(api, routing);
  deleteBranchRoute(api, routing);
  applyBranchRoute(api, routing);
}

function createBranchRoute(api: Api, { rt, status, liveVersion, nameStream }: BranchRouting): void {
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
}

function replaceFilesRoute(api: Api, { rt, status, liveVersion, branchOf }: BranchRouting): void {
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
}

function deleteBranchRoute(api: Api, { rt, nameStream, branchOf }: BranchRouting): void {
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
}

function applyBranchRoute(api: Api, { rt, status, branchOf }: BranchRouting): void {
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
      await applyBranch(rt, factory, branch, context);
      return status(branch.uid);
    },
  );
}
