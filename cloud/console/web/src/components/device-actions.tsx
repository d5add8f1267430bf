// What an operator can do to one device from its page, each an admin API call (`fleet device label`,
// `fleet device groups`, `fleet device remove` make the same ones): set or clear its label, replace its
// groups, remove it. Removing is the one that cannot be undone from here (the device must be enrolled
// again), so it looks like it (the danger style) and asks first, in the page, naming the device.
import { useState } from 'preact/hooks';
import { ActionForm, Button, Field } from '../../../../../web-common/browser/fields.tsx';
import { useAction, type Action } from '../../../../../web-common/browser/hooks.ts';
import { api, apiPath, describeError } from '../api.ts';
import type { Device } from '../types.ts';

/** Groups as typed: separated by spaces or commas, each once. */
export const groupsOf = (text: string) => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

function Outcome({ action }: { action: Action }) {
  const o = action.outcome;
  if (!o) return null;
  return o.kind === 'error' ? (
    <p class="error" role="alert">
      {o.text}
    </p>
  ) : (
    <p class="ok" role="status">
      {o.text}
    </p>
  );
}

function RemoveDevice({ uuid, onRemoved }: { uuid: string; onRemoved: () => void }) {
  const [asking, setAsking] = useState(false);
  const action = useAction(describeError);
  const remove = () =>
    action.run(async () => {
      await api('DELETE', apiPath('admin', 'devices', uuid), { success: 204 });
      onRemoved();
    });
  if (!asking) {
    return (
      <div class="remove">
        <Button class="danger" onClick={() => setAsking(true)}>
          Remove device…
        </Button>
      </div>
    );
  }
  return (
    <div class="remove confirm" role="group" aria-label={`confirm removing ${uuid}`}>
      <p>
        Remove <strong class="mono">{uuid}</strong>? It can no longer sign its requests (backups, health reports) until it is enrolled again; its
        stored backup and its update outcomes are kept.
      </p>
      <p class="inline">
        <Button class="danger" busy={action.busy} onClick={remove}>
          Remove {uuid}
        </Button>
        <Button
          busy={action.busy}
          onClick={() => {
            action.setOutcome(null);
            setAsking(false);
          }}
        >
          Cancel
        </Button>
      </p>
      <Outcome action={action} />
    </div>
  );
}

export function DeviceActions({ d, onChanged, onRemoved }: { d: Device; onChanged: () => void; onRemoved: () => void }) {
  const [label, setLabel] = useState(d.label ?? '');
  const [groups, setGroups] = useState(d.groups.join(' '));
  const labelAction = useAction(describeError);
  const groupsAction = useAction(describeError);
  return (
    <div class="device-actions">
      <ActionForm
        class="edit"
        aria-label="label"
        action={labelAction}
        run={async () => {
          const text = label.trim();
          await api('PUT', apiPath('admin', 'devices', d.uuid, 'label'), { body: { label: text === '' ? null : text } });
          onChanged();
          return text === '' ? 'Label cleared.' : 'Label saved.';
        }}
      >
        <Field label="Label" value={label} onValue={setLabel} maxLength={200} hint="Where it is, what it drives; empty clears it" />
        <Button type="submit" busy={labelAction.busy}>
          Save label
        </Button>
        <Outcome action={labelAction} />
      </ActionForm>
      <ActionForm
        class="edit"
        aria-label="groups"
        action={groupsAction}
        run={async () => {
          const list = groupsOf(groups);
          await api('PUT', apiPath('admin', 'devices', d.uuid, 'groups'), { body: { groups: list } });
          onChanged();
          return list.length ? `Groups saved: ${list.join(', ')}.` : 'Groups cleared.';
        }}
      >
        <Field label="Groups" value={groups} onValue={setGroups} hint="Separated by spaces or commas; a staged rollout may target them" />
        <Button type="submit" busy={groupsAction.busy}>
          Save groups
        </Button>
        <Outcome action={groupsAction} />
      </ActionForm>
      <RemoveDevice uuid={d.uuid} onRemoved={onRemoved} />
    </div>
  );
}
