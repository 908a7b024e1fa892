/**
 * The scorer's file form (`scorers/<name>/scorer.md`, reference notes 6.2): YAML front matter
 * (`agents`, `labels`, `passingScore`, `model`; optionally `name`, `description`, `enabled`,
 * `output`, `samplingRate`, `selfImprovement`) and the rubric as its body; unknown keys are kept
 * forward-compatible. Read into the fields a scorer is made of, under the same rules as the API
 * (one decider), with problems named by the file's own keys; and written back from a scorer.
 * Factory-as-code (issue #22) applies scorers through it.
 */
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import type { FieldError } from '../../src/kernel/errors.js';
import { scorerProblems } from './scorer-decider.js';
import type { ScorerFields } from './events.js';
import { own } from '../../src/own-keys.js';

/** The file's default sampling rate (the API's omitted rate is every run). */
const FILE_SAMPLING_RATE = 25;
const DEFAULT_FAILED_RUN_THRESHOLD = 25;

const frontMatter = z.looseObject({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(2000).optional(),
  agents: z.array(z.string().trim().min(1).max(128)).min(1).max(100),
  labels: z
    .array(
      z.strictObject({
        value: z.string().trim().min(1).max(100),
        score: z.number().min(0).max(1),
        description: z.string().max(2000).optional(),
      }),
    )
    .min(1)
    .max(20),
  passingScore: z.number().min(0).max(1),
  model: z.string().trim().min(1).max(200),
  enabled: z.boolean().default(true),
  output: z.literal('classification').default('classification'),
  samplingRate: z
    .number()
    .min(0.01)
    .max(100)
    .refine((r) => Math.round(r * 100) === r * 100, 'at most two decimals')
    .default(FILE_SAMPLING_RATE),
  selfImprovement: z.boolean().default(false),
});

/** API field → the file key that sets it, for problems. */
const FILE_KEY: Record<string, string> = {
  'body.allowed_classifications': 'labels',
  'body.threshold': 'passingScore',
  'body.agent_uids': 'agents',
};

export interface ScorerFile {
  /** The scorer's name: `name`, else the directory's. */
  name: string;
  /** The agents named, for the caller to resolve to the factory's agents (all scorer files select agents). */
  agent_names: string[];
  fields: Omit<ScorerFields, 'agents'>;
}

/** Reads `scorers/<dir>/scorer.md`; the problems name the file's keys (`labels`, `passingScore`, ...). */
export function readScorerFile(dir: string, content: string): { scorer: ScorerFile | null; problems: FieldError[] } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(content);
  if (!m)
    return { scorer: null, problems: [{ path: '', message: 'a scorer file starts with --- YAML front matter ---' }] };
  let meta: unknown;
  try {
    meta = parse(m[1]!, { uniqueKeys: true, merge: false });
  } catch (error) {
    return {
      scorer: null,
      problems: [{ path: '', message: `front matter is not YAML: ${(error as Error).message.split('\n')[0]}` }],
    };
  }
  const parsed = frontMatter.safeParse(meta);
  const rubric = m[2]!.trim();
  const problems: FieldError[] = rubric
    ? []
    : [{ path: 'body', message: 'the rubric (the text after the front matter) is empty' }];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push({ path: issue.path.join('.'), message: issue.message });
    return { scorer: null, problems };
  }
  const f = parsed.data;
  const fields: Omit<ScorerFields, 'agents'> = {
    name: f.name ?? dir,
    description: f.description ?? '',
    scoring_prompt: rubric,
    model_id: f.model,
    threshold: f.passingScore,
    allowed_classifications: f.labels.map((l) => ({
      value: l.value,
      score: l.score,
      description: l.description ?? null,
    })),
    scope_mode: 'selected_agents',
    // A disabled scorer judges nothing on its own (manual dispatch still works).
    sampling_rate: f.enabled ? f.samplingRate : 0,
    agent_config: { default_runner_uid: null, mcp_servers: null, secrets: null },
    self_improvement: { enabled: f.selfImprovement, failed_run_threshold: DEFAULT_FAILED_RUN_THRESHOLD },
  };
  const agents = f.agents.map((uid) => ({ uid, include_descendants: false }));
  for (const p of scorerProblems({ ...fields, agents }))
    problems.push({ path: own(FILE_KEY, p.path) ?? p.path.replace(/^body\./, ''), message: p.message });
  return { scorer: problems.length ? null : { name: fields.name, agent_names: f.agents, fields }, problems };
}

/** A scorer as its file: the front matter of 6.2 and the rubric. `agentNames` name its agents in the file. */
export function writeScorerFile(fields: ScorerFields, agentNames: readonly string[]): string {
  const meta = {
    name: fields.name,
    ...(fields.description ? { description: fields.description } : {}),
    agents: agentNames,
    labels: fields.allowed_classifications.map((c) => ({
      value: c.value,
      score: c.score,
      ...(c.description ? { description: c.description } : {}),
    })),
    passingScore: fields.threshold,
    model: fields.model_id,
    ...(fields.sampling_rate === 0 ? { enabled: false } : { samplingRate: fields.sampling_rate ?? 100 }),
    ...(fields.self_improvement.enabled ? { selfImprovement: true } : {}),
  };
  return `---\n${stringify(meta).trimEnd()}\n---\n${fields.scoring_prompt}\n`;
}
