// Runtime configuration of the cloud's own functions (spec 2.7, 3.4; DESIGN.md section 4): stage with
// PATCH, deploy (the level applies at once, then the deployment bakes for APPCONFIG_DEPLOY_SECONDS,
// during which deploy and DELETE answer 409), delete (back to WARNING).
import { NO_PEERS, type Peers } from '../peers/peers.ts';
import { ApiError } from '../errors.ts';
import {
  CLOUD_FUNCTIONS,
  DEFAULT_LOG_LEVEL,
  FUNCTION_PREFIX,
  isCloudFunction,
  LOG_LEVELS,
  parseLogLevel,
  type CloudFunction,
  type LogLevel,
} from '../functions.ts';
import type { LogLevels } from '../logging.ts';
import { ConfigurationPatch, FunctionParams } from '../schema/api.ts';
import { checker, describeProblem, detailValue } from '../schema/validator.ts';
import type { CloudStore, FunctionConfigState } from '../store/types.ts';

/** The configuration keys a function understands. Today only the log level (spec 2.7). */
export const CONFIGURATION_KEYS = ['logging'] as const;

export interface FunctionConfigView {
  function_name: CloudFunction;
  effective_level: LogLevel;
  staged: { version: number; configuration: Record<string, unknown>; staged_at: string } | null;
  deployed: { version: number; configuration: Record<string, unknown>; deployed_at: string } | null;
  deployment: { version: number; state: 'IN_PROGRESS' | 'COMPLETE'; started_at: string; ends_at: string } | null;
}

const checkName = checker(FunctionParams);
const checkPatch = checker(ConfigurationPatch);

export function checkFunctionName(name: string): CloudFunction {
  if (!checkName({ function_name: name })) {
    const [p] = checkName.problems();
    throw new ApiError('invalid_function_name', { function_name: name.slice(0, 128), required_prefix: FUNCTION_PREFIX, expected: p?.expected }, describeProblem(p!));
  }
  if (!isCloudFunction(name)) throw new ApiError('function_not_found', { function_name: name.slice(0, 128), functions: [...CLOUD_FUNCTIONS] });
  return name;
}

/** Validates a PATCH body (ConfigurationPatch) and returns the normalized partial configuration. */
export function parseConfigurationPatch(body: unknown): { logging?: LogLevel } {
  if (checkPatch(body)) return { logging: parseLogLevel(body.logging)! };
  const problems = checkPatch.problems();
  const root = problems.find((p) => p.field === '');
  if (root?.keyword === 'type') {
    throw new ApiError('invalid_body', { expected: '{"logging": "<level>"}' }, 'The body must be a JSON object such as {"logging": "DEBUG"}');
  }
  const unknown = problems.filter((p) => p.keyword === 'additionalProperties').map((p) => p.field);
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 16).map((k) => k.slice(0, 64));
    throw new ApiError('unknown_configuration_key', { keys: shown, allowed: [...CONFIGURATION_KEYS] }, `Unknown configuration key: ${shown.join(', ')}`);
  }
  if (root?.keyword === 'minProperties') {
    throw new ApiError('invalid_body', { allowed: [...CONFIGURATION_KEYS] }, 'The body must set at least one configuration key');
  }
  const raw = (body as Record<string, unknown>).logging;
  throw new ApiError(
    'invalid_log_level',
    // Only a scalar is echoed (a string cut short): an array or object may be 30,000 levels deep,
    // more than JSON.stringify can write back.
    { key: 'logging', value: detailValue(raw ?? null), type: raw === null ? 'null' : Array.isArray(raw) ? 'array' : typeof raw, allowed: [...LOG_LEVELS] },
    `The log level must be one of ${LOG_LEVELS.join(', ')}`,
  );
}

export class AppConfigService {
  constructor(
    private readonly store: CloudStore,
    private readonly levels: LogLevels,
    private readonly deploySeconds: number,
    private readonly now: () => number,
    private readonly peers: Peers = NO_PEERS,
  ) {
    peers.onEvent(async (event) => {
      if (event.kind === 'log-levels-changed') await this.levels.refresh();
    });
  }

  /** The deployed levels changed: read again here, and on every other worker before answering (DESIGN.md 4: "on every instance at once"). */
  private async levelsChanged(): Promise<void> {
    await this.levels.refresh();
    await this.peers.broadcast({ kind: 'log-levels-changed' });
  }

  view(state: FunctionConfigState): FunctionConfigView {
    const nowMs = this.now();
    const dep = state.deployment;
    const staged = state.latest && (!dep || state.latest.version > dep.version) ? state.latest : null;
    return {
      function_name: state.functionName as CloudFunction,
      effective_level: parseLogLevel(dep?.configuration.logging) ?? DEFAULT_LOG_LEVEL,
      staged: staged ? { version: staged.version, configuration: staged.configuration, staged_at: staged.createdAt } : null,
      deployed: dep ? { version: dep.version, configuration: dep.configuration, deployed_at: dep.startedAt } : null,
      deployment: dep
        ? { version: dep.version, state: Date.parse(dep.endsAt) > nowMs ? 'IN_PROGRESS' : 'COMPLETE', started_at: dep.startedAt, ends_at: dep.endsAt }
        : null,
    };
  }

  async get(fn: CloudFunction): Promise<FunctionConfigView> {
    return this.view(await this.store.getFunctionConfig(fn));
  }

  async list(): Promise<FunctionConfigView[]> {
    return Promise.all(CLOUD_FUNCTIONS.map((fn) => this.get(fn)));
  }

  async stage(fn: CloudFunction, body: unknown): Promise<FunctionConfigView> {
    const patch = parseConfigurationPatch(body);
    const current = await this.store.getFunctionConfig(fn);
    const base = current.latest?.configuration ?? current.deployment?.configuration ?? {};
    return this.view(await this.store.stageConfig(fn, { ...base, ...patch }, new Date(this.now()).toISOString()));
  }

  async deploy(fn: CloudFunction): Promise<FunctionConfigView> {
    const result = await this.store.startDeployment(fn, this.now(), Math.round(this.deploySeconds * 1000));
    if (!result.ok) {
      if (result.reason === 'in_progress') {
        throw new ApiError('deployment_in_progress', { function_name: fn, ends_at: result.state.deployment?.endsAt });
      }
      throw new ApiError('no_staged_configuration', { function_name: fn });
    }
    await this.levelsChanged();
    return this.view(result.state);
  }

  async remove(fn: CloudFunction): Promise<void> {
    const result = await this.store.deleteConfig(fn, this.now());
    if (!result.ok) {
      throw result.reason === 'in_progress'
        ? new ApiError('deployment_in_progress', { function_name: fn })
        : new ApiError('configuration_not_found', { function_name: fn });
    }
    await this.levelsChanged();
  }
}
