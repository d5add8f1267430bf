// A controller's configuration as the site keeps it and deploys it: the document that the
// controller stores as /backup.json (spec 2.3: inputs, outputs, circuits, areas, colours, icons,
// MQTT and OTA settings). Checked by one schema (TypeBox + Ajv, cloud/schema/validator.ts) and by
// the references between items; exported in one canonical text, whose SHA-256 is what the
// controller's HEAD /backup ETag is compared with (docs/configurator-site.md).
import { Type, type Static } from '@sinclair/typebox';
import { createHash } from 'node:crypto';
import { defaultSettings } from '../../firmware/src/core/settings.ts';
import { checker, describeProblem, EXPECTED } from '../../cloud/schema/validator.ts';
import { ConfiguratorError } from './errors.ts';

/** The controller refuses a larger /backup.json (DESIGN.md section 4): so does the site. */
export const MAX_EXPORT_BYTES = defaultSettings('production').maxLocalBackupBytes;
export const CONFIGURATION_FORMAT = 'fleet-controller-configuration-v1';

const ItemId = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$', [EXPECTED]: 'an id: 1 to 32 of a-z 0-9 _ -, starting with a letter or a digit' });
const Name = Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', [EXPECTED]: 'a name of 1 to 64 characters' });
const Pin = Type.Integer({ minimum: 0, maximum: 48, [EXPECTED]: 'a GPIO number from 0 to 48' });
const Refs = Type.Array(ItemId, { maxItems: 256, uniqueItems: true });

export const INPUT_KINDS = ['switch', 'button', 'motion', 'contact', 'analog'] as const;
export const OUTPUT_KINDS = ['relay', 'dimmer', 'rgb', 'rgbw'] as const;
export const ICON_SYMBOLS = ['bulb', 'lamp', 'fan', 'door', 'window', 'sun', 'moon', 'plug', 'heat', 'star'] as const;
const oneOf = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)), { [EXPECTED]: `one of ${values.join(', ')}` });

const Input = Type.Object({ id: ItemId, name: Name, kind: oneOf(INPUT_KINDS), pin: Pin }, { additionalProperties: false });
const Output = Type.Object({ id: ItemId, name: Name, kind: oneOf(OUTPUT_KINDS), pin: Pin }, { additionalProperties: false });
const Circuit = Type.Object({ id: ItemId, name: Name, outputs: Refs, inputs: Refs }, { additionalProperties: false });
const Area = Type.Object({ id: ItemId, name: Name, circuits: Refs, color: Type.Optional(ItemId), icon: Type.Optional(ItemId) }, { additionalProperties: false });
const Color = Type.Object({ id: ItemId, name: Name, hex: Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', [EXPECTED]: 'a colour #RRGGBB' }) }, { additionalProperties: false });
const Icon = Type.Object({ id: ItemId, name: Name, symbol: oneOf(ICON_SYMBOLS) }, { additionalProperties: false });
const Mqtt = Type.Object(
  {
    enabled: Type.Boolean(),
    host: Type.String({ maxLength: 253, pattern: '^$|^[A-Za-z0-9.:\\[\\]-]+$', [EXPECTED]: 'a host name or IP address (not a URL)' }),
    port: Type.Integer({ minimum: 1, maximum: 65535, [EXPECTED]: 'a port from 1 to 65535' }),
    tls: Type.Boolean(),
    username: Type.String({ maxLength: 256 }),
    password: Type.String({ maxLength: 256, writeOnly: true }),
    base_topic: Type.String({ maxLength: 128, pattern: '^[^#+\\u0000]*$', [EXPECTED]: 'an MQTT topic without # or +' }),
  },
  { additionalProperties: false },
);
const Ota = Type.Object(
  { auto_update: Type.Boolean(), check_interval_hours: Type.Integer({ minimum: 1, maximum: 720, [EXPECTED]: 'hours from 1 to 720' }) },
  { additionalProperties: false },
);
const list = <T extends ReturnType<typeof Type.Object>>(item: T) => Type.Array(item, { maxItems: 1024 });

export const ConfigurationSchema = Type.Object(
  {
    format: Type.Literal(CONFIGURATION_FORMAT, { [EXPECTED]: JSON.stringify(CONFIGURATION_FORMAT) }),
    inputs: list(Input),
    outputs: list(Output),
    circuits: list(Circuit),
    areas: list(Area),
    colors: list(Color),
    icons: list(Icon),
    mqtt: Mqtt,
    ota: Ota,
  },
  { additionalProperties: false },
);
export type Configuration = Static<typeof ConfigurationSchema>;

const isConfiguration = checker(ConfigurationSchema);

/** What a new controller starts with: nothing configured, MQTT off, OTA daily. */
export function emptyConfiguration(): Configuration {
  return {
    format: CONFIGURATION_FORMAT,
    inputs: [],
    outputs: [],
    circuits: [],
    areas: [],
    colors: [],
    icons: [],
    mqtt: { enabled: false, host: '', port: 8883, tls: true, username: '', password: '', base_topic: '' },
    ota: { auto_update: true, check_interval_hours: 24 },
  };
}

/** The first problem of a document, as a sentence naming the field; null when it is usable. */
export function configurationProblem(value: unknown): { field: string; message: string } | null {
  if (!isConfiguration(value)) {
    const p = isConfiguration.problems()[0]!;
    return { field: p.field, message: describeProblem(p, 'configuration') };
  }
  const c = value;
  const sections = ['inputs', 'outputs', 'circuits', 'areas', 'colors', 'icons'] as const;
  const ids = new Map<string, Set<string>>();
  for (const s of sections) {
    const seen = new Set<string>();
    for (const [i, item] of c[s].entries()) {
      if (seen.has(item.id)) return { field: `${s}[${i}].id`, message: `configuration.${s}[${i}].id: "${item.id}" is used twice in ${s}` };
      seen.add(item.id);
    }
    ids.set(s, seen);
  }
  const refs: [keyof Configuration & ('circuits' | 'areas'), string, 'outputs' | 'inputs' | 'circuits' | 'colors' | 'icons'][] = [
    ['circuits', 'outputs', 'outputs'],
    ['circuits', 'inputs', 'inputs'],
    ['areas', 'circuits', 'circuits'],
    ['areas', 'color', 'colors'],
    ['areas', 'icon', 'icons'],
  ];
  for (const [section, key, target] of refs) {
    for (const [i, item] of (c[section] as Record<string, unknown>[]).entries()) {
      const value = item[key];
      const wanted = Array.isArray(value) ? (value as string[]) : value === undefined ? [] : [value as string];
      for (const id of wanted) {
        if (!ids.get(target)!.has(id)) return { field: `${section}[${i}].${key}`, message: `configuration.${section}[${i}].${key}: there is no ${target.slice(0, -1)} "${id}"` };
      }
    }
  }
  const pins = new Map<number, string>();
  for (const s of ['inputs', 'outputs'] as const) {
    for (const [i, item] of c[s].entries()) {
      const other = pins.get(item.pin);
      if (other) return { field: `${s}[${i}].pin`, message: `configuration.${s}[${i}].pin: GPIO ${item.pin} is already used by ${other}` };
      pins.set(item.pin, `${s.slice(0, -1)} "${item.id}"`);
    }
  }
  return null;
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
