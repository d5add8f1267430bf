// The appconfig tables as both halves read them (appconfig_versions, appconfig_deployments): the
// configuration as JSON text, the deployment's times as epoch milliseconds (BIGINT: strings from
// PostgreSQL, numbers from SQLite).
import type { ConfigVersion, Deployment, FunctionConfigState } from './types.ts';

export interface VersionRow {
  version: number;
  configuration: string;
  created_at: string;
}

export interface DeploymentRow {
  function_name: string;
  version: number;
  configuration: string;
  started_at_ms: number | string;
  ends_at_ms: number | string;
}

function versionFromRow(r: VersionRow): ConfigVersion {
  return { version: r.version, configuration: JSON.parse(r.configuration) as Record<string, unknown>, createdAt: r.created_at };
}

export function deploymentFromRow(r: DeploymentRow): Deployment {
  return {
    version: r.version,
    configuration: JSON.parse(r.configuration) as Record<string, unknown>,
    startedAt: new Date(Number(r.started_at_ms)).toISOString(),
    endsAt: new Date(Number(r.ends_at_ms)).toISOString(),
  };
}

export function configStateFromRows(functionName: string, latest: VersionRow | undefined, deployment: DeploymentRow | undefined): FunctionConfigState {
  return { functionName, latest: latest ? versionFromRow(latest) : null, deployment: deployment ? deploymentFromRow(deployment) : null };
}

/** Whether a deployment's bake time is still running at `nowMs` (spec 3.4: no other deployment meanwhile). */
export const inProgress = (deployment: DeploymentRow | undefined, nowMs: number) => deployment !== undefined && Number(deployment.ends_at_ms) > nowMs;
