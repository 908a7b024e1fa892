/** Who is calling: a user or an agent, the teams they belong to, and the active team. */
import type { Actor } from '../kernel/decider.js';

export type Role = 'admin' | 'member';

export interface Principal extends Actor {
  type: 'user' | 'agent';
  /** Team uid → role, in the order the principal joined them. */
  teams: Map<string, Role>;
}

interface ActiveTeam {
  uid: string;
  role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    team: ActiveTeam | null;
    /** The time of record of this request (the server's clock when it arrived). */
    now: string;
  }
  interface FastifyContextConfig {
    /** Reachable without a bearer credential. */
    public?: boolean;
  }
}
