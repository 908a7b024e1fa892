/**
 * GET /teams/{team_uid}/outbound-webhooks (and one), and GET …/{webhook_uid}/deliveries: the
 * delivery log, newest first, with every attempt's time, status code and latency. For the team's
 * people and agents; others do not know the team.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import {
  deliveriesAnswer,
  deliveriesQuery,
  outboundWebhookParams,
  outboundWebhookResource,
  teamParams,
  toDeliveryResource,
  toOutboundWebhookResource,
} from '../../commands/outbound/public.js';
import { MAX_ENDPOINTS_PER_TEAM } from '../../commands/outbound/events.js';
import { outboundDeliveriesProjection } from '../../projections/outbound/outbound-deliveries.js';
import { outboundWebhooksProjection } from '../../projections/outbound/outbound-webhooks.js';

const NEWEST_FIRST: Sort = [
  ['created_at', 'desc'],
  ['id', 'desc'],
];

export default function outboundWebhookQueries(api: Api, rt: Runtime): void {
  const tags = ['outbound webhooks'];
  const endpoints = rt.readModel(outboundWebhooksProjection);
  const deliveries = rt.readModel(outboundDeliveriesProjection);

  const assertMember = (req: FastifyRequest, team: string) => {
    if (!req.principal?.teams.has(team)) throw new NotFound('team', team);
  };
  const endpointOf = async (req: FastifyRequest, team: string, uid: string) => {
    assertMember(req, team);
    const doc = await endpoints.get(uid);
    if (!doc || doc.team_uid !== team) throw new NotFound('outbound webhook', uid);
    return doc;
  };

  api.get(
    '/teams/:team_uid/outbound-webhooks',
    {
      schema: {
        params: teamParams,
        response: { 200: z.object({ outbound_webhooks: z.array(outboundWebhookResource) }) },
        tags,
      },
    },
    async (req) => {
      assertMember(req, req.params.team_uid);
      const page = await endpoints.find({
        filter: { team_uid: req.params.team_uid },
        sort: [
          ['created_at', 'asc'],
          ['id', 'asc'],
        ],
        limit: MAX_ENDPOINTS_PER_TEAM,
      });
      return { outbound_webhooks: page.items.map(toOutboundWebhookResource) };
    },
  );

  api.get(
    '/teams/:team_uid/outbound-webhooks/:webhook_uid',
    { schema: { params: outboundWebhookParams, response: { 200: outboundWebhookResource }, tags } },
    async (req) => toOutboundWebhookResource(await endpointOf(req, req.params.team_uid, req.params.webhook_uid)),
  );

  api.get(
    '/teams/:team_uid/outbound-webhooks/:webhook_uid/deliveries',
    {
      schema: {
        params: outboundWebhookParams,
        querystring: deliveriesQuery,
        response: { 200: deliveriesAnswer },
        tags,
      },
    },
    async (req) => {
      const endpoint = await endpointOf(req, req.params.team_uid, req.params.webhook_uid);
      const { status, limit, cursor } = req.query;
      const page = await deliveries.find({
        filter: { webhook_uid: endpoint.uid, status },
        sort: NEWEST_FIRST,
        limit,
        after: decodeCursor(cursor, NEWEST_FIRST),
        maxScan: rt.config.LIST_MAX_SCAN,
      });
      return { deliveries: page.items.map(toDeliveryResource), page_info: pageInfo(NEWEST_FIRST, page.next) };
    },
  );
}
