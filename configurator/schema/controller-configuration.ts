// A controller's configuration: the document it stores as /backup.json (spec 2.3: inputs, outputs,
// circuits, areas, colours, icons, MQTT and OTA settings). Its schema, the kinds an item may be, its
// sections and the references between them are declared here once, for the server that checks,
// stores and deploys it (server/export.ts) and for the page that edits it
// (web/src/pages/configuration.tsx). docs/configurator-site.md.
//
// TypeBox is imported as a namespace so that the page's bundle takes only the builders used here.
import * as Type from '@sinclair/typebox';
import { EXPECTED } from '../../cloud/schema/annotations.ts';

export const CONFIGURATION_FORMAT = 'fleet-controller-configuration-v1';

export const INPUT_KINDS = ['switch', 'button', 'motion', 'contact', 'analog'] as const;
export const OUTPUT_KINDS = ['relay', 'dimmer', 'rgb', 'rgbw'] as const;
export const ICON_SYMBOLS = ['bulb', 'lamp', 'fan', 'door', 'window', 'sun', 'moon', 'plug', 'heat', 'star'] as const;

const ItemId = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$', [EXPECTED]: 'an id: 1 to 32 of a-z 0-9 _ -, starting with a letter or a digit' });
const Name = Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', [EXPECTED]: 'a name of 1 to 64 characters' });
const Pin = Type.Integer({ minimum: 0, maximum: 48, [EXPECTED]: 'a GPIO number from 0 to 48' });
const Refs = Type.Array(ItemId, { maxItems: 256, uniqueItems: true });
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
const list = <T extends Type.TObject>(item: T) => Type.Array(item, { maxItems: 1024 });

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
export type Configuration = Type.Static<typeof ConfigurationSchema>;

/** The lists of items, in the order the page shows them; each item has an id unique in its list. */
export const SECTIONS = ['inputs', 'outputs', 'circuits', 'areas', 'colors', 'icons'] as const;
export type Section = (typeof SECTIONS)[number];

/** An item field that names items of another section: by a list of ids (`many`) or by one, optional. */
export interface Reference {
  from: Section;
  field: string;
  to: Section;
  many: boolean;
}

/** The reference graph: every reference must name an existing item. */
export const REFERENCES: readonly Reference[] = [
  { from: 'circuits', field: 'outputs', to: 'outputs', many: true },
  { from: 'circuits', field: 'inputs', to: 'inputs', many: true },
  { from: 'areas', field: 'circuits', to: 'circuits', many: true },
  { from: 'areas', field: 'color', to: 'colors', many: false },
  { from: 'areas', field: 'icon', to: 'icons', many: false },
];

/** The sections whose items sit on a GPIO: a pin serves one input or output. */
const ON_PINS = ['inputs', 'outputs'] as const;

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

/**
 * The first problem between the items of a document of the schema's shape, naming the field: an id
 * used twice in a section, a reference to no item, a GPIO used twice. null when there is none.
 */
export function itemsProblem(c: Configuration): { field: string; message: string } | null {
  const ids = new Map<Section, Set<string>>();
  for (const s of SECTIONS) {
    const seen = new Set<string>();
    for (const [i, item] of c[s].entries()) {
      if (seen.has(item.id)) return { field: `${s}[${i}].id`, message: `configuration.${s}[${i}].id: "${item.id}" is used twice in ${s}` };
      seen.add(item.id);
    }
    ids.set(s, seen);
  }
  for (const { from, field, to } of REFERENCES) {
    for (const [i, item] of (c[from] as Record<string, unknown>[]).entries()) {
      const value = item[field];
      const wanted = Array.isArray(value) ? (value as string[]) : value === undefined ? [] : [value as string];
      for (const id of wanted) {
        if (!ids.get(to)!.has(id)) return { field: `${from}[${i}].${field}`, message: `configuration.${from}[${i}].${field}: there is no ${to.slice(0, -1)} "${id}"` };
      }
    }
  }
  const pins = new Map<number, string>();
  for (const s of ON_PINS) {
    for (const [i, item] of c[s].entries()) {
      const other = pins.get(item.pin);
      if (other) return { field: `${s}[${i}].pin`, message: `configuration.${s}[${i}].pin: GPIO ${item.pin} is already used by ${other}` };
      pins.set(item.pin, `${s.slice(0, -1)} "${item.id}"`);
    }
  }
  return null;
}
