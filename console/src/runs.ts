/** The run resource as the console reads it (the fields it shows). */
export const RUN_STATES = [
  'QUEUED',
  'PENDING',
  'CLAIMED',
  'INPROGRESS',
  'SUCCEEDED',
  'FAILED',
  'ERROR',
  'BLOCKED',
  'CANCELLED',
] as const;
export const RUN_SOURCES = [
  'API',
  'SCHEDULED_AGENT',
  'WEB_APP',
  'CLI',
  'SELF_IMPROVEMENT',
  'RUN_SCORER',
  'ORCHESTRATION',
  'BENCHMARK_TRIAL',
  'GITHUB_WEBHOOK',
  'GITLAB_WEBHOOK',
  'LINEAR',
  'SLACK',
  'JIRA',
  'LOCAL',
  'GITHUB_ACTION',
  'CLOUD_MODE',
  'AUTOFIX',
] as const;

export interface Usage {
  inference_cost_usd?: number;
  compute_cost_usd?: number;
  platform_cost_usd?: number;
  total_tokens?: number;
}

export interface Artifact {
  artifact_type: string;
  created_at?: string;
  data: Record<string, unknown>;
}

export interface RunSummary {
  run_id: string;
  title: string;
  state: string;
  prompt: string;
  source: string;
  created_at: string;
  updated_at: string;
  started_at?: string | null;
  finished_at?: string | null;
  run_time?: string;
  creator?: { type: string; uid: string };
  factory_uid?: string;
  parent_run_id?: string;
  root_run_id?: string;
  conversation_id?: string;
  status_message?: { message: string };
  request_usage?: Usage;
  is_run_type_cancellable?: boolean;
  artifacts?: Artifact[];
  schedule?: { schedule_id: string; schedule_name: string };
  /** Guardrails: a run that needed a team admin's approval; its place in the queue (one run's GET only). */
  approval?: Approval;
  queue_position?: number;
}

export interface Approval {
  state: 'pending' | 'approved' | 'denied' | 'expired';
  rule: string;
  requested_at: string;
  expires_at: string;
  decided_by: { type: string; uid: string } | null;
  decided_at: string | null;
}

/** What a run cost so far, in US dollars (inference, compute and platform together). */
export const runCost = (u: Usage | undefined) =>
  u ? (u.inference_cost_usd ?? 0) + (u.compute_cost_usd ?? 0) + (u.platform_cost_usd ?? 0) : null;

export const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED']);
