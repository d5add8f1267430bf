// Runtime configuration (appconfig): each function's numbered versions and its deployment with its bake
// time (docs/appconfig-deployments.md). Tables: appconfig_versions, appconfig_deployments.

export interface ConfigVersion {
  version: number;
  configuration: Record<string, unknown>;
  createdAt: string;
}

export interface Deployment {
  version: number;
  configuration: Record<string, unknown>;
  startedAt: string;
  /** The end of the bake time; until then the deployment is in progress. */
  endsAt: string;
}

/** Everything known of one function's runtime configuration. */
export interface FunctionConfigState {
  functionName: string;
  latest: ConfigVersion | null;
  deployment: Deployment | null;
}

export type DeployResult =
  | { ok: true; state: FunctionConfigState }
  | { ok: false; reason: 'in_progress' | 'nothing_staged'; state: FunctionConfigState };

export type DeleteConfigResult = { ok: true } | { ok: false; reason: 'in_progress' | 'not_found' };

export interface AppconfigStore {
  getFunctionConfig(functionName: string): Promise<FunctionConfigState>;
  /** Stages a new version (the latest); it is not deployed. */
  stageConfig(functionName: string, configuration: Record<string, unknown>, at: string): Promise<FunctionConfigState>;
  /**
   * Deploys the latest version when it is staged (newer than the deployed one), unless a deployment
   * is in progress at `nowMs`. Atomic; the in-progress check comes first.
   */
  startDeployment(functionName: string, nowMs: number, durationMs: number): Promise<DeployResult>;
  /** Removes every version and the deployment unless a deployment is in progress. Atomic. */
  deleteConfig(functionName: string, nowMs: number): Promise<DeleteConfigResult>;
  /** The deployed configuration of every function that has one. */
  listDeployments(): Promise<Map<string, Deployment>>;
}
