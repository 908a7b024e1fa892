/** The task resource as the console reads it. */
export const STAGES = ['TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'COMPLETE', 'CANCELLED'] as const;

export interface TaskSummary {
  uid: string;
  factory_uid: string;
  title: string;
  description?: string;
  stage: string;
  run_id?: string;
  conversation_id?: string;
  created_at: string;
  updated_at: string;
  current_run?: { run_id: string; state: string } | null;
  outputs?: Array<{ artifact_type: string; created_at: string; data: Record<string, unknown> }>;
}
