/** Configuration from the environment, validated once at start-up. */
import path from 'node:path';
import { z } from 'zod';

const schema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATA_DIR: z.string().default('./data'),
  EVENTSTORE_URL: z.string().optional(),
  MONGODB_URL: z.string().optional(),
  MONGODB_DB: z.string().default('shopfloor'),
  PUBLIC_BASE_URL: z.string().url().optional(),
  WEBHOOK_BASE_URL: z.string().url().optional(),
  BOOTSTRAP_API_KEY: z.string().min(16).optional(),
  BOOTSTRAP_TEAM_NAME: z.string().min(1).default('Default team'),
  BOOTSTRAP_USER_EMAIL: z.string().email().default('admin@example.com'),
  /** Signs time-limited download URLs; generated into DATA_DIR when not given. Share it between instances. */
  URL_SIGNING_SECRET: z.string().min(32).optional(),
  /** Comma-separated CIDR ranges that outbound agent traffic leaves from. */
  EGRESS_RANGES: z.string().default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof schema> & { publicBaseUrl: string; webhookBaseUrl: string };

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.parse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  const publicBaseUrl = (parsed.PUBLIC_BASE_URL ?? `http://${parsed.HOST}:${parsed.PORT}`).replace(/\/$/, '');
  return {
    ...parsed,
    DATA_DIR: path.resolve(parsed.DATA_DIR),
    publicBaseUrl,
    webhookBaseUrl: (parsed.WEBHOOK_BASE_URL ?? publicBaseUrl).replace(/\/$/, ''),
  };
}
