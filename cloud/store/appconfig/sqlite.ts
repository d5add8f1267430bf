// The appconfig domain on SQLite (types.ts has the contract, rows.ts the rows both halves share): each
// transition is one IMMEDIATE transaction, so it reads what no other process changes before its write.
import type { SqliteConnection } from '../sqlite-connection.ts';
import { configStateFromRows, deploymentFromRow, inProgress, type DeploymentRow, type VersionRow } from './rows.ts';
import type { AppconfigStore, DeleteConfigResult, DeployResult } from './types.ts';

export function sqliteAppconfig(c: SqliteConnection): AppconfigStore {
  const { db } = c;
  const stmts = {
    latestVersion: db.prepare<[string], VersionRow>(
      `SELECT version, configuration, created_at FROM appconfig_versions WHERE function_name = ?
       ORDER BY version DESC LIMIT 1`,
    ),
    insertVersion: db.prepare(`INSERT INTO appconfig_versions (function_name, version, configuration, created_at) VALUES (?, ?, ?, ?)`),
    getDeployment: db.prepare<[string], DeploymentRow>(`SELECT * FROM appconfig_deployments WHERE function_name = ?`),
    listDeployments: db.prepare<[], DeploymentRow>(`SELECT * FROM appconfig_deployments`),
    upsertDeployment: db.prepare(
      `INSERT INTO appconfig_deployments (function_name, version, configuration, started_at_ms, ends_at_ms)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (function_name) DO UPDATE SET version = excluded.version, configuration = excluded.configuration,
         started_at_ms = excluded.started_at_ms, ends_at_ms = excluded.ends_at_ms`,
    ),
    deleteVersions: db.prepare(`DELETE FROM appconfig_versions WHERE function_name = ?`),
    deleteDeployment: db.prepare(`DELETE FROM appconfig_deployments WHERE function_name = ?`),
  };
  const state = (functionName: string) => configStateFromRows(functionName, stmts.latestVersion.get(functionName), stmts.getDeployment.get(functionName));

  return {
    getFunctionConfig: (functionName) => c.read(() => db.transaction(() => state(functionName))()),

    stageConfig: (functionName, configuration, at) =>
      c.transaction(() => {
        const latest = stmts.latestVersion.get(functionName);
        stmts.insertVersion.run(functionName, (latest?.version ?? 0) + 1, JSON.stringify(configuration), at);
        return state(functionName);
      }),

    startDeployment: (functionName, nowMs, durationMs) =>
      c.transaction((): DeployResult => {
        const dep = stmts.getDeployment.get(functionName);
        if (inProgress(dep, nowMs)) return { ok: false, reason: 'in_progress', state: state(functionName) };
        const latest = stmts.latestVersion.get(functionName);
        // Only a version newer than the deployed one is staged (spec 3.4: staged -> deployed).
        if (!latest || (dep && dep.version >= latest.version)) return { ok: false, reason: 'nothing_staged', state: state(functionName) };
        stmts.upsertDeployment.run(functionName, latest.version, latest.configuration, nowMs, nowMs + durationMs);
        return { ok: true, state: state(functionName) };
      }),

    deleteConfig: (functionName, nowMs) =>
      c.transaction((): DeleteConfigResult => {
        if (inProgress(stmts.getDeployment.get(functionName), nowMs)) return { ok: false, reason: 'in_progress' };
        const removedVersions = stmts.deleteVersions.run(functionName).changes;
        const removedDeployment = stmts.deleteDeployment.run(functionName).changes;
        return removedVersions + removedDeployment === 0 ? { ok: false, reason: 'not_found' } : { ok: true };
      }),

    listDeployments: () => c.read(() => new Map(stmts.listDeployments.all().map((r) => [r.function_name, deploymentFromRow(r)]))),
  };
}
