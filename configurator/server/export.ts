// A controller's configuration as the site keeps it and deploys it (its schema, sections and
// references: schema/controller-configuration.ts): checked by the schema (TypeBox + Ajv,
// cloud/schema/validator.ts) and by the references between items, and exported in one canonical text,
// whose SHA-256 is what the controller's HEAD /backup ETag is compared with
// (docs/configurator-site.md).
import { createHash } from 'node:crypto';
import { checker, describeProblem } from '../../cloud/schema/validator.ts';
import { defaultSettings } from '../../firmware/src/core/settings.ts';
import { ConfigurationSchema, itemsProblem, type Configuration } from '../schema/controller-configuration.ts';
import { ConfiguratorError } from './errors.ts';

/** The controller refuses a larger /backup.json (DESIGN.md section 4): so does the site. */
export const MAX_EXPORT_BYTES = defaultSettings('production').maxLocalBackupBytes;

const isConfiguration = checker(ConfigurationSchema);

/** The first problem of a document, as a sentence naming the field; null when it is usable. */
export function configurationProblem(value: unknown): { field: string; message: string } | null {
  if (!isConfiguration(value)) {
    const p = isConfiguration.problems()[0]!;
    return { field: p.field, message: describeProblem(p, 'configuration') };
  }
  return itemsProblem(value);
}

/** Checks a document; 400 `invalid_configuration` naming the field otherwise. */
export function checkConfiguration(value: unknown): Configuration {
  const problem = configurationProblem(value);
  if (problem) throw new ConfiguratorError('invalid_configuration', problem.message, { field: problem.field });
  return value as Configuration;
}

/** Keys sorted at every level, arrays in their order: the same configuration is always the same text. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = canonical((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/** The export: canonical JSON, two-space indented, one final newline. */
export function exportText(c: Configuration): string {
  return JSON.stringify(canonical(c), null, 2) + '\n';
}

/** The ETag the controller computes for the same bytes (DESIGN.md section 3: lowercase SHA-256 hex). */
export function etagOf(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A document as received (an import, a Pull): size first, then JSON, then the schema. Nothing is
 * parsed beyond the limit.
 */
export function parseConfiguration(bytes: Buffer): Configuration {
  if (bytes.length > MAX_EXPORT_BYTES) throw ConfiguratorError.tooLarge(bytes.length, MAX_EXPORT_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new ConfiguratorError('invalid_json', `The configuration is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const c = checkConfiguration(value);
  const size = Buffer.byteLength(exportText(c));
  if (size > MAX_EXPORT_BYTES) throw ConfiguratorError.tooLarge(size, MAX_EXPORT_BYTES);
  return c;
}
