/**
 * Reading conversations: the normalized conversation and transcript of a run or a whole
 * conversation, screenshots, the block snapshot, and the two public redirect checks.
 *
 * A conversation is visible to whoever may view its newest run (the rule that continuing it
 * follows too); a run's own conversation and transcript hold that run's turns only, so reading a
 * run never shows runs of the conversation the caller may not see.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { noContent, uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Filter, Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import {
  artifactsProjection,
  runsProjection,
  type RunDoc,
  canView,
  filenameOf,
  isTerminal,
  runParams,
  viewerOf,
} from '../../commands/run/public.js';
import {
  conversationMessagesProjection,
  type MessageDoc,
  type TurnDoc,
} from '../../projections/conversation/conversation-messages.js';
import { normalizeConversation, normalizedConversation } from '../../commands/conversation/public.js';
import { signedBlobUrl } from '../../src/blobs/routes.js';
import type { Api } from '../../src/http/api.js';

const LOG_ORDER: Sort = [
  ['seq', 'asc'],
  ['id', 'asc'],
];
const PAGE = 500;

const conversationParams = z.object({ conversation_id: uidParam });

const conversationResponse = { 200: normalizedConversation };
const redirect = (what: string) => ({ 302: noContent(`Redirect to a signed, time-limited download URL of ${what}`) });
const signedUrl = z.object({ url: z.string().describe('A signed, time-limited download URL'), expires_at: z.string() });

const ownerOf = (run: RunDoc) => ({
  team_uid: run.team_uid,
  creator_uid: run.creator.uid,
  executing_team_uid: run.executing_team_uid,
});

const transcriptOf = (conversationId: string, runId: string | null, items: Array<TurnDoc | MessageDoc>) => ({
  conversation_id: conversationId,
  ...(runId ? { run_id: runId } : {}),
  messages: items
    .filter((i): i is MessageDoc => i.kind === 'message')
    .map(({ message_id, run_id, step_id, parent_step_id, role, timestamp, content }) => ({
      message_id,
      run_id,
      step_id,
      parent_step_id,
      role,
      timestamp,
      content,
    })),
});

const tags = ['conversations'];
const transcriptResponse = redirect("the transcript (JSON: the conversation's messages)");

/** What the conversation queries share: the items of a conversation, and who may read one. */
function conversationReading(rt: Runtime) {
  const messages = rt.readModel(conversationMessagesProjection);
  const turns = rt.readTable(conversationMessagesProjection, 'turns');
  const conversations = rt.readTable(conversationMessagesProjection, 'conversations');
  const runs = rt.readModel(runsProjection);

  const conversationRuns = async (id: string): Promise<string[]> => (await conversations.get(id))?.run_ids ?? [];

  return {
    rt,
    runs,
    artifacts: rt.readModel(artifactsProjection),
    conversationRuns,
    /** Every turn and message matching `filter`, in log order (a turn before the message that opens it). */
    itemsWhere: async (filter: Filter): Promise<Array<TurnDoc | MessageDoc>> => {
      const [t, m] = await Promise.all([
        findAll(turns, { filter, sort: LOG_ORDER, limit: PAGE }),
        findAll(messages, { filter, sort: LOG_ORDER, limit: PAGE }),
      ]);
      return [...t, ...m].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
    },
    visibleRun: async (req: FastifyRequest, runId: string): Promise<RunDoc> => {
      const run = await runs.get(runId);
      if (!run || !canView(ownerOf(run), viewerOf(req.principal!))) throw new NotFound('run', runId);
      return run;
    },
    visibleConversation: async (req: FastifyRequest, id: string): Promise<RunDoc> => {
      const newestId = (await conversationRuns(id)).at(-1);
      const newest = newestId ? await runs.get(newestId) : null;
      if (!newest || !canView(ownerOf(newest), viewerOf(req.principal!))) throw new NotFound('conversation', id);
      return newest;
    },
    jsonFile: async (value: unknown, filename: string) => {
      const blob = await rt.blobs.put(Buffer.from(JSON.stringify(value, null, 2), 'utf8'));
      return signedBlobUrl(rt, blob, filename, 'application/json');
    },
  };
}

type ConversationReading = ReturnType<typeof conversationReading>;

export default function conversationQueries(api: Api, rt: Runtime): void {
  const reading = conversationReading(rt);
  runConversationRoutes(api, reading);
  conversationRoutes(api, reading);
  screenshotRoute(api, reading);
  blockSnapshotRoute(api, reading);
  publicRedirectRoutes(api, reading);
}

/** A run's own conversation and transcript: that run's turns only. */
function runConversationRoutes(api: Api, { itemsWhere, visibleRun, jsonFile }: ConversationReading): void {
  const runConversationSchema = { params: runParams, response: conversationResponse, tags };
  api.get('/agent/runs/:run_id/conversation', { schema: runConversationSchema }, async (req) => {
    const run = await visibleRun(req, req.params.run_id);
    return normalizeConversation(run.conversation_id, await itemsWhere({ run_id: run.run_id }));
  });

  const runTranscriptSchema = { params: runParams, response: transcriptResponse, tags };
  api.get('/agent/runs/:run_id/transcript', { schema: runTranscriptSchema }, async (req, reply) => {
    const run = await visibleRun(req, req.params.run_id);
    const link = await jsonFile(
      transcriptOf(run.conversation_id, run.run_id, await itemsWhere({ run_id: run.run_id })),
      'transcript.json',
    );
    return reply.redirect(link.url, 302);
  });
}

function conversationRoutes(api: Api, { itemsWhere, visibleConversation, jsonFile }: ConversationReading): void {
  const conversationSchema = { params: conversationParams, response: conversationResponse, tags };
  api.get('/agent/conversations/:conversation_id', { schema: conversationSchema }, async (req) => {
    const id = req.params.conversation_id;
    await visibleConversation(req, id);
    return normalizeConversation(id, await itemsWhere({ conversation_id: id }));
  });

  api.get(
    '/agent/conversations/:conversation_id/transcript',
    { schema: { params: conversationParams, response: transcriptResponse, tags } },
    async (req, reply) => {
      const id = req.params.conversation_id;
      await visibleConversation(req, id);
      const link = await jsonFile(transcriptOf(id, null, await itemsWhere({ conversation_id: id })), 'transcript.json');
      return reply.redirect(link.url, 302);
    },
  );
}

function screenshotRoute(api: Api, { rt, artifacts, visibleConversation }: ConversationReading): void {
  api.get(
    '/agent/conversations/:conversation_id/screenshots/:screenshot_uid/download',
    {
      schema: {
        params: conversationParams.extend({ screenshot_uid: uidParam }),
        response: redirect('the image'),
        tags,
      },
    },
    async (req, reply) => {
      const { conversation_id, screenshot_uid } = req.params;
      await visibleConversation(req, conversation_id);
      const shot = await artifacts.get(screenshot_uid);
      if (shot?.artifact_type !== 'SCREENSHOT' || shot.conversation_id !== conversation_id || !shot.blob) {
        throw new NotFound('screenshot', screenshot_uid);
      }
      const mime = typeof shot.data.mime_type === 'string' ? shot.data.mime_type : 'image/png';
      return reply.redirect(signedBlobUrl(rt, shot.blob, filenameOf(shot), mime).url, 302);
    },
  );
}

function blockSnapshotRoute(api: Api, { itemsWhere, visibleConversation, jsonFile }: ConversationReading): void {
  api.get(
    '/agent/conversations/:conversation_id/block-snapshot',
    {
      schema: {
        params: conversationParams,
        querystring: z.object({ redirect: z.enum(['true', 'false']).default('true') }).strict(),
        response: {
          200: signedUrl.describe('With redirect=false: the download URL of the snapshot'),
          ...redirect('the block snapshot (JSON: the normalized conversation)'),
        },
        tags,
      },
    },
    async (req, reply) => {
      const id = req.params.conversation_id;
      await visibleConversation(req, id);
      const link = await jsonFile(
        normalizeConversation(id, await itemsWhere({ conversation_id: id })),
        'block-snapshot.json',
      );
      return req.query.redirect === 'false' ? link : reply.redirect(link.url, 302);
    },
  );
}

/** Public checks: they tell only whether a session ended or is live, never its content. */
function publicRedirectRoutes(api: Api, { runs, conversationRuns }: ConversationReading): void {
  const publicRoute = { config: { public: true }, schema: { tags, security: [] } } as const;

  const sessionRedirect = z.object({
    conversation_id: z.string().optional().describe('Once the session ended and its conversation is readable'),
  });
  api.get(
    '/agent/sessions/:session_uuid/redirect',
    {
      ...publicRoute,
      schema: {
        ...publicRoute.schema,
        params: z.object({ session_uuid: uidParam }),
        response: { 200: sessionRedirect },
      },
    },
    async (req) => {
      const id = req.params.session_uuid;
      const newestId = (await conversationRuns(id)).at(-1);
      const newest = newestId ? await runs.get(newestId) : null;
      return newest && isTerminal(newest.state) ? { conversation_id: id } : {};
    },
  );

  const liveRedirect = z.object({
    session_id: z.string().optional().describe('While a live shared session of the conversation runs'),
  });
  api.get(
    '/agent/conversations/:conversation_id/redirect',
    { ...publicRoute, schema: { ...publicRoute.schema, params: conversationParams, response: { 200: liveRedirect } } },
    async (req) => {
      const id = req.params.conversation_id;
      const states = await runs.getMany(await conversationRuns(id));
      return [...states.values()].some((r) => r.state === 'INPROGRESS') ? { session_id: id } : {};
    },
  );
}
