/**
 * What a feature brings to the platform, in one entry (`commands/<feature>/index.ts`): its
 * routes, read models, reactors and background services. The composition root (`features.ts`)
 * lists the entries; nothing else in `src/` knows a feature.
 */
import type { PrincipalSource } from './http/access.js';
import type { AnyProjection } from './projector/projection.js';
import type { AnyReactor } from './projector/reactor.js';
import type { Runtime } from './runtime.js';
import type { Api } from './http/api.js';
import { own } from './own-keys.js';
import type { StreamEventSource } from './streams/stream-events.js';

/** Registers routes on `api` (relative to /api/v1, or to the root for `rootRoutes`). */
type Routes = (api: Api, rt: Runtime) => void;

/** A background service of a running server; stopped before the stores close. */
export interface Service {
  stop(): Promise<void>;
}

/** A `shopfloor <name> …` command; returns the process's exit code. */
export interface CliCommand {
  name: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}

export interface Feature {
  name: string;
  routes?: readonly Routes[];
  /** Routes outside /api/v1, such as the webhook ingress. */
  rootRoutes?: readonly Routes[];
  projections?: readonly AnyProjection[];
  reactors?: ReadonlyArray<AnyReactor<Runtime>>;
  /** Runs once the read models are open, before anything is served; its result is kept by name. */
  start?(rt: Runtime): Promise<unknown>;
  services?: ReadonlyArray<(rt: Runtime) => Service>;
  /** How an API key maps to a principal: exactly one feature provides it. */
  principals?(rt: Runtime): PrincipalSource;
  cli?: readonly CliCommand[];
  /** The events it tells the event streams (and outbound webhooks) of: types, payload schemas, mappers. */
  streamEvents?: readonly StreamEventSource[];
}

export const feature = (f: Feature): Feature => f;

/** One command made of subcommands (`shopfloor runs trace|follow`), each handed the whole argv. */
export function commandGroup(name: string, parts: Record<string, CliCommand>): CliCommand {
  const usage = Object.values(parts)
    .map((p) => p.usage)
    .join('\n');
  return {
    name,
    usage,
    async run(argv) {
      const part = own(parts, argv[0] ?? '');
      if (part) return part.run(argv);
      console.error(`usage:\n${usage}`);
      return 2;
    },
  };
}

export const projectionsOf = (features: readonly Feature[]): AnyProjection[] =>
  features.flatMap((f) => f.projections ?? []);

export const streamSourcesOf = (features: readonly Feature[]): StreamEventSource[] =>
  features.flatMap((f) => f.streamEvents ?? []);
