/** GET /networking/egress-ranges: where outbound traffic of agents comes from (configuration). */
import { z } from 'zod';
import { parseRanges } from '../../src/net/cidr.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';

const egressRanges = z.object({
  ranges: z
    .array(z.string())
    .describe('Canonical CIDR ranges (network address, host bits cleared) that outbound requests of agents come from'),
});

export default function networkingQueries(api: Api, rt: Runtime): void {
  const ranges = parseRanges(rt.config.EGRESS_RANGES);
  api.get(
    '/networking/egress-ranges',
    { schema: { response: { 200: egressRanges }, tags: ['networking'] } },
    async () => ({ ranges }),
  );
}
