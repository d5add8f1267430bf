// The appconfig domain on PostgreSQL (types.ts has the contract, rows.ts the rows both halves share):
// each transition is one transaction holding its function's advisory lock, so two never interleave.
import type pg from 'pg';
import type { PostgresConnection } from '../postgres-pool.ts';
import { configStateFromRows, deploymentFromRow, inProgress, type DeploymentRow, type VersionRow } from './rows.ts';
import type { AppconfigStore, DeleteConfigResult, DeployResult, FunctionConfigState } from './types.ts';

const GET_DEPLOYMENT = 'SELECT * FROM appconfig_deployments WHERE function_name = $1';

async function configState(c: pg.ClientBase, functionName: string): Promise<FunctionConfigState> {
  const latest = await c.query<VersionRow>('SELECT version, configuration, created_at FROM appconfig_versions WHERE function_name = $1 ORDER BY version DESC LIMIT 1', [functionName]);
  const dep = await c.query<DeploymentRow>(GET_DEPLOYMENT, [functionName]);
  return configStateFromRows(functionName, latest.rows[0], dep.rows[0]);
}

export function postgresAppconfig({ pool, tx }: PostgresConnection): AppconfigStore {
  /** A transaction holding the function's advisory lock: its transitions never interleave. */
  const locked = <T>(functionName: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> =>
    tx(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`appconfig:${functionName}`]);
      return fn(c);
    });

  return {
    async getFunctionConfig(functionName) {
      const client = await pool.connect();
      try {
        return await configState(client, functionName);
      } finally {
        client.release();
      }
    },

    stageConfig: (functionName, configuration, at) =>
      locked(functionName, async (c) => {
        await c.query(
          `INSERT INTO appconfig_versions (function_name, version, configuration, created_at)
           SELECT $1, COALESCE(max(version), 0) + 1, $2, $3 FROM appconfig_versions WHERE function_name = $1`,
          [functionName, JSON.stringify(configuration), at],
        );
        return configState(c, functionName);
      }),

    startDeployment: (functionName, nowMs, durationMs) =>
      locked(functionName, async (c): Promise<DeployResult> => {
        const state = await configState(c, functionName);
        const dep = state.deployment;
        if (dep && Date.parse(dep.endsAt) > nowMs) return { ok: false, reason: 'in_progress', state };
        if (!state.latest || (dep && dep.version >= state.latest.version)) return { ok: false, reason: 'nothing_staged', state };
        await c.query(
          `INSERT INTO appconfig_deployments (function_name, version, configuration, started_at_ms, ends_at_ms) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (function_name) DO UPDATE SET version = EXCLUDED.version, configuration = EXCLUDED.configuration,
             started_at_ms = EXCLUDED.started_at_ms, ends_at_ms = EXCLUDED.ends_at_ms`,
          [functionName, state.latest.version, JSON.stringify(state.latest.configuration), nowMs, nowMs + durationMs],
        );
        return { ok: true, state: await configState(c, functionName) };
      }),

    deleteConfig: (functionName, nowMs) =>
      locked(functionName, async (c): Promise<DeleteConfigResult> => {
        if (inProgress((await c.query<DeploymentRow>(GET_DEPLOYMENT, [functionName])).rows[0], nowMs)) return { ok: false, reason: 'in_progress' };
        const versions = (await c.query('DELETE FROM appconfig_versions WHERE function_name = $1', [functionName])).rowCount ?? 0;
        const deployments = (await c.query('DELETE FROM appconfig_deployments WHERE function_name = $1', [functionName])).rowCount ?? 0;
        return versions + deployments === 0 ? { ok: false, reason: 'not_found' } : { ok: true };
      }),

    async listDeployments() {
      const { rows } = await pool.query<DeploymentRow>('SELECT * FROM appconfig_deployments');
      return new Map(rows.map((r) => [r.function_name, deploymentFromRow(r)]));
    },
  };
}
