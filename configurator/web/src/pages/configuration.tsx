// A controller's configuration (the /backup.json it is deployed): its items, MQTT and OTA settings,
// edited here and saved to the site as a whole; imported from a file or exported to one. Its
// sections, the kinds an item may be and the references between items are the model's
// (schema/controller-configuration.ts); this page says how to show them. The server checks every
// save (server/export.ts) and refuses a bad or oversized document with a message naming the field;
// the site keeps what it had.
import { useEffect, useId, useState } from 'preact/hooks';
import { errorText } from '../../../../web-common/browser/api-client.ts';
import { Button, Check, Field, Select } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { brokerAddress } from '../../../schema/routes.ts';
import { ICON_SYMBOLS, INPUT_KINDS, OUTPUT_KINDS, REFERENCES, SECTIONS, type Section } from '../../../schema/controller-configuration.ts';
import { api, type Configuration } from '../api.ts';
import { Message, shortEtag } from '../components/ui.tsx';

type Item = Record<string, unknown> & { id: string; name: string };

interface Column {
  key: string;
  label: string;
  type: 'number' | 'select' | 'refs' | 'ref' | 'color';
  options?: readonly string[];
  /** For refs/ref: the section whose ids may be picked. */
  of?: Section;
}

/** How each section is shown: its title, its own fields besides id and name, and a new item's values. */
const VIEWS: Record<Section, { title: string; fields: Column[]; blank: Record<string, unknown> }> = {
  inputs: { title: 'Inputs', fields: [{ key: 'kind', label: 'Kind', type: 'select', options: INPUT_KINDS }, { key: 'pin', label: 'GPIO', type: 'number' }], blank: { kind: INPUT_KINDS[0], pin: 0 } },
  outputs: { title: 'Outputs', fields: [{ key: 'kind', label: 'Kind', type: 'select', options: OUTPUT_KINDS }, { key: 'pin', label: 'GPIO', type: 'number' }], blank: { kind: OUTPUT_KINDS[0], pin: 0 } },
  circuits: { title: 'Circuits', fields: [], blank: {} },
  areas: { title: 'Areas', fields: [], blank: {} },
  colors: { title: 'Colours', fields: [{ key: 'hex', label: 'Colour', type: 'color' }], blank: { hex: '#FFD8A8' } },
  icons: { title: 'Icons', fields: [{ key: 'symbol', label: 'Symbol', type: 'select', options: ICON_SYMBOLS }], blank: { symbol: ICON_SYMBOLS[0] } },
};
/** The labels of the reference fields of the model's graph. */
const REFERENCE_LABELS: Record<string, string> = { outputs: 'Outputs', inputs: 'Inputs', circuits: 'Circuits', color: 'Colour', icon: 'Icon' };

/** A section as the editor shows it: its fields, then its references (a list of ids, or one id or none). */
function sectionView(key: Section) {
  const refs = REFERENCES.filter((r) => r.from === key);
  const columns: Column[] = [...VIEWS[key].fields, ...refs.map((r): Column => ({ key: r.field, label: REFERENCE_LABELS[r.field] ?? r.field, type: r.many ? 'refs' : 'ref', of: r.to }))];
  const blank = () => ({ ...VIEWS[key].blank, ...Object.fromEntries(refs.filter((r) => r.many).map((r) => [r.field, []])) });
  return { key, title: VIEWS[key].title, columns, blank, optional: new Set(refs.filter((r) => !r.many).map((r) => r.field)) };
}
const EDITORS = SECTIONS.map(sectionView);

function nextId(items: Item[], prefix: string): string {
  for (let n = items.length + 1; ; n++) if (!items.some((i) => i.id === `${prefix}-${n}`)) return `${prefix}-${n}`;
}

function RefPicker({ label, value, ids, onValue }: { label: string; value: string[]; ids: string[]; onValue: (v: string[]) => void }) {
  const group = useId();
  return (
    <fieldset class="refs" aria-labelledby={group}>
      <legend id={group}>{label}</legend>
      {ids.length === 0 && <small class="hint">none defined</small>}
      {ids.map((id) => (
        <Check key={id} label={id} checked={value.includes(id)} onChange={(on) => onValue(on ? [...value, id] : value.filter((v) => v !== id))} />
      ))}
    </fieldset>
  );
}

function ItemEditor({ section, doc, onChange }: { section: (typeof EDITORS)[number]; doc: Configuration; onChange: (items: Item[]) => void }) {
  const items = doc[section.key] as unknown as Item[];
  const update = (i: number, key: string, value: unknown) => {
    const next = items.map((it, j) => (j === i ? { ...it, [key]: value } : it));
    if (value === '' && section.optional.has(key)) delete (next[i] as Record<string, unknown>)[key];
    onChange(next);
  };
  return (
    <section class="panel" aria-labelledby={`sec-${section.key}`}>
      <h3 id={`sec-${section.key}`}>
        {section.title} <small>({items.length})</small>
      </h3>
      {items.map((item, i) => (
        <div class="item" key={i} role="group" aria-label={`${section.title} ${i + 1}`}>
          <Field label="Id" value={item.id} onValue={(v) => update(i, 'id', v)} />
          <Field label="Name" value={item.name} onValue={(v) => update(i, 'name', v)} />
          {section.columns.map((col) => {
            const v = item[col.key];
            if (col.type === 'select') return <Select key={col.key} label={col.label} value={String(v)} options={col.options!} onValue={(x) => update(i, col.key, x)} />;
            if (col.type === 'number') return <Field key={col.key} label={col.label} type="number" inputMode="numeric" value={String(v)} onValue={(x) => update(i, col.key, x === '' ? '' : Number(x))} />;
            if (col.type === 'color') return <Field key={col.key} label={col.label} value={String(v)} onValue={(x) => update(i, col.key, x)} hint="#RRGGBB" />;
            const ids = (doc[col.of!] as unknown as Item[]).map((x) => x.id);
            if (col.type === 'ref') return <Select key={col.key} label={col.label} value={typeof v === 'string' ? v : ''} options={[['', '(none)'], ...ids.map((x): [string, string] => [x, x])]} onValue={(x) => update(i, col.key, x)} />;
            return <RefPicker key={col.key} label={col.label} value={(v as string[]) ?? []} ids={ids} onValue={(x) => update(i, col.key, x)} />;
          })}
          <Button class="remove" onClick={() => onChange(items.filter((_, j) => j !== i))} aria-label={`Remove ${section.title.toLowerCase()} ${item.id}`}>
            Remove
          </Button>
        </div>
      ))}
      <Button onClick={() => onChange([...items, { id: nextId(items, section.key.slice(0, 3)), name: '', ...section.blank() }])}>Add to {section.title.toLowerCase()}</Button>
    </section>
  );
}

/**
 * The broker is set in two places, each for its own device (docs/configurator-logins.md): here the
 * controller's own connection; the clients' in the site's Client settings, shown here to compare.
 */
function MqttOta({ doc, set, clientBroker }: { doc: Configuration; set: (d: Configuration) => void; clientBroker: string | null | undefined }) {
  const m = doc.mqtt;
  const mqtt = (patch: Partial<Configuration['mqtt']>) => set({ ...doc, mqtt: { ...m, ...patch } });
  return (
    <>
      <section class="panel" aria-labelledby="sec-mqtt">
        <h3 id="sec-mqtt">MQTT</h3>
        <p class="detail" data-testid="broker-source">
          This controller's own connection. The site's clients use the broker set in <a href="#/settings">Client settings</a>
          {clientBroker === undefined ? '.' : clientBroker === null ? ' (none set yet).' : `: ${clientBroker}${clientBroker === brokerAddress(m) ? ', the same as here.' : '.'}`}
        </p>
        <Check label="MQTT on" checked={m.enabled} onChange={(v) => mqtt({ enabled: v })} />
        <div class="row">
          <Field label="Broker host" value={m.host} onValue={(v) => mqtt({ host: v })} />
          <Field label="Port" type="number" value={String(m.port)} onValue={(v) => mqtt({ port: Number(v) })} />
          <Field label="Base topic" value={m.base_topic} onValue={(v) => mqtt({ base_topic: v })} />
          <Field label="User name" value={m.username} onValue={(v) => mqtt({ username: v })} autocomplete="off" />
          <Field label="Password" type="password" value={m.password} onValue={(v) => mqtt({ password: v })} autocomplete="new-password" />
        </div>
        <Check label="TLS" checked={m.tls} onChange={(v) => mqtt({ tls: v })} />
      </section>
      <section class="panel" aria-labelledby="sec-ota">
        <h3 id="sec-ota">OTA updates</h3>
        <Check label="Install updates automatically" checked={doc.ota.auto_update} onChange={(v) => set({ ...doc, ota: { ...doc.ota, auto_update: v } })} />
        <Field label="Check every (hours)" type="number" value={String(doc.ota.check_interval_hours)} onValue={(v) => set({ ...doc, ota: { ...doc.ota, check_interval_hours: Number(v) } })} />
      </section>
    </>
  );
}

export function ConfigurationTab({ id, name }: { id: number; name: string }) {
  const [saved, setSaved] = useState<{ etag: string; size: number; limit: number } | null>(null);
  const [doc, setDoc] = useState<Configuration | null>(null);
  const [dirty, setDirty] = useState(false);
  /** host:port of the site's client broker; undefined until read. */
  const [clientBroker, setClientBroker] = useState<string | null | undefined>(undefined);
  const action = useAction();
  const load = () =>
    action.run(async () => {
      const c = await api.configuration({ id });
      setDoc(c.configuration);
      setSaved(c);
      setDirty(false);
      const s = (await api.site()).client_settings;
      setClientBroker(s ? brokerAddress(s.mqtt) : null);
    });
  useEffect(() => void load(), [id]);
  const edit = (d: Configuration) => {
    setDoc(d);
    setDirty(true);
  };
  const save = (text: string, what: string) =>
    action.run(async () => {
      const c = await api.saveConfiguration({ id, text });
      setDoc(c.configuration);
      setSaved(c);
      setDirty(false);
      return `${what}: ${c.size} bytes, ETag ${shortEtag(c.etag)}. Deploy it from the controllers page.`;
    });
  const importFile = async (file: File | undefined) => {
    if (!file) return;
    // The server refuses anything over the controller's limit with its own message; a file many
    // times that size is not read into the page at all.
    if (file.size > 16 * 1024 * 1024) {
      action.setOutcome({ kind: 'error', text: `${file.name} is ${file.size} bytes: not a controller configuration. Nothing was changed.` });
      return;
    }
    const text = await file.text();
    await action.run(async () => {
      try {
        const c = await api.saveConfiguration({ id, text });
        setDoc(c.configuration);
        setSaved(c);
        setDirty(false);
        return `Imported ${file.name}: ${c.size} bytes, ETag ${shortEtag(c.etag)}. Deploy it from the controllers page.`;
      } catch (err) {
        throw new Error(`${file.name}: ${errorText(err)} (nothing was changed)`);
      }
    });
  };
  const exportFile = () =>
    action.run(async () => {
      const { blob, name: fileName } = await api.exportConfiguration({ id });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = fileName;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    });
  const fileInput = useId();
  if (!doc) return <Message outcome={action.outcome} />;
  return (
    <div>
      <p class="detail">
        {name}'s configuration in this site: {saved?.size ?? 0} of {saved?.limit ?? 0} bytes, ETag <code>{shortEtag(saved?.etag ?? null)}</code>
        {dirty && <strong class="unsaved"> · unsaved changes</strong>}
      </p>
      <div class="actions sticky">
        <Button busy={action.busy} disabled={!dirty} onClick={() => save(JSON.stringify(doc), 'Saved')}>
          Save
        </Button>
        <Button busy={action.busy} disabled={!dirty} onClick={load}>
          Discard changes
        </Button>
        <Button busy={action.busy} onClick={exportFile}>
          Export file
        </Button>
        <label class="file" for={fileInput}>
          Import file
        </label>
        <input id={fileInput} class="visually-hidden-file" type="file" accept=".json,application/json" onChange={(e) => void importFile((e.currentTarget as HTMLInputElement).files?.[0]).finally(() => ((e.target as HTMLInputElement).value = ''))} />
      </div>
      <Message outcome={action.outcome} testId="configuration-message" />
      {EDITORS.map((s) => (
        <ItemEditor key={s.key} section={s} doc={doc} onChange={(items) => edit({ ...doc, [s.key]: items })} />
      ))}
      <MqttOta doc={doc} set={edit} clientBroker={clientBroker} />
    </div>
  );
}
