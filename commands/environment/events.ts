/** A cloud environment (`CloudEnvironmentConfig`): `environment-<id>`, ids of 22 characters [A-Za-z0-9]. */

export interface EnvironmentConfig {
  name: string;
  description?: string | null;
  docker_image?: string;
  github_repos: Array<{ owner: string; repo: string }>;
  setup_commands: string[];
  providers?: {
    gcp?: {
      project_number: string;
      workload_identity_federation_pool_id: string;
      workload_identity_federation_provider_id: string;
      service_account_email?: string;
    };
    aws?: { role_arn: string };
  };
  /** How long a failed setup keeps its session for debugging (1-60 minutes), or null. */
  failure_session_retention_minutes?: number | null;
}

export type EnvironmentEvent =
  | { type: 'EnvironmentCreated'; data: { id: string; team_uid: string; config: EnvironmentConfig } }
  | { type: 'EnvironmentUpdated'; data: { id: string; config: EnvironmentConfig } }
  | { type: 'EnvironmentDeleted'; data: { id: string } };

export const environmentStream = (id: string) => `environment-${id}`;
