/**
 * The bound on webhook bodies read before their sender is authenticated (signature webhooks must
 * read the body to check the signature): without it slow senders could hold every descriptor of
 * the process. The bounds and the 503: docs/configuration.md "Slow and unauthenticated clients".
 *
 * Two counters rather than a plugin: @fastify/rate-limit counts requests over time, not requests
 * in flight, and a queue (p-queue, p-limit) would make the refused senders wait, holding the very
 * sockets this bound is for.
 */
export interface BodyReads {
  /** A slot for reading one body of `webhook`, or null when the bound is reached; release it once read. */
  take(webhook: string): (() => void) | null;
}

export function boundedBodyReads(total: number, perWebhook: number): BodyReads {
  let reading = 0;
  const byWebhook = new Map<string, number>();
  return {
    take(webhook) {
      const mine = byWebhook.get(webhook) ?? 0;
      if (reading >= total || mine >= perWebhook) return null;
      reading++;
      byWebhook.set(webhook, mine + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        reading--;
        const left = byWebhook.get(webhook)! - 1;
        if (left === 0) byWebhook.delete(webhook);
        else byWebhook.set(webhook, left);
      };
    },
  };
}
