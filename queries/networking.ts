/** GET /networking/egress-ranges: where outbound traffic of agents comes from (configuration). */
import { parseRanges } from '../src/net/cidr.js';
import type { Runtime } from '../src/runtime.js';
import type { Api } from '../src/http/api.js';

export default function networkingQueries(api: Api, rt: Runtime): void {
  const ranges = parseRanges(rt.config.EGRESS_RANGES);
  api.get('/networking/egress-ranges', { schema: { tags: ['networking'] } }, async () => ({ ranges }));
}
