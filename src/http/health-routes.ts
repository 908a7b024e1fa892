/** `/healthz` (the process answers) and `/readyz` (its read models have caught up and can be written). */
import type { Runtime } from '../runtime.js';
import type { Api } from './api.js';
import { sendProblem } from './problem.js';

export function healthRoutes(app: Api, rt: Runtime): void {
  app.get('/healthz', { schema: { hide: true }, config: { notShed: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const notReady = (detail: string) => sendProblem(reply, 503, 'not_ready', 'Not ready', detail);
    if (!rt.projector.isReady) return notReady('The read models are still catching up with the event log');
    if (rt.projector.isFailing) return notReady('The read models cannot be written; the projector is retrying');
    const [setAside, reactors] = await Promise.all([rt.projector.setAside(), rt.reactors()]).catch(() => [null, null]);
    if (!setAside || !reactors) return notReady('The read store did not answer');
    // Events set aside do not make the process unready: it serves every read model, the affected
    // one without those events (docs: operations, set-aside events); nor do reactors still passing
    // the log: it serves, but their reactions lag, and it says so. Names and counts only: this
    // route needs no credential.
    const catchingUp = reactors.filter((r) => r.catching_up);
    return {
      status: 'ready',
      set_aside: setAside,
      reactors: {
        catching_up: catchingUp.map((r) => ({ reactor: r.name, behind_events: r.behind_events })),
        set_aside: reactors.filter((r) => r.set_aside > 0).map((r) => ({ reactor: r.name, events: r.set_aside })),
      },
      ...(catchingUp.length
        ? { detail: 'Reactors are still catching up with the event log; their reactions lag' }
        : {}),
    };
  });
}
