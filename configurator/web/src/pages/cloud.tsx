// Cloud backup of one controller (spec 4.2): push (the controller encrypts its /backup.json and
// uploads it), retrieve (it downloads, decrypts and writes /backup.json), delete; and the cloud URL
// the controller uses. Everything goes through the controller with this browser's visual-token; the
// controller's own answers (not enrolled, clock not synchronized, no backup) are shown as it says them.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ActionForm, Button, Field } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { Message, shortEtag } from '../components/ui.tsx';

export function CloudTab({ id, name, loggedIn, onChanged }: { id: number; name: string; loggedIn: boolean; onChanged: () => void }) {
  const [url, setUrl] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (loggedIn) void action.run(async () => setUrl((await api.cloud({ id })).url ?? ''));
  }, [id, loggedIn]);
  if (!loggedIn) return <p class="detail">Log in to {name} to back it up to the cloud.</p>;
  return (
    <div>
      <ActionForm
        class="panel"
        aria-labelledby="cloud-url-title"
        action={action}
        run={async () => {
          const r = await api.setCloud({ id, body: { url: url.trim() } });
          setUrl(r.url ?? '');
          return r.url ? `${name} backs up to ${r.url}` : `${name} has no cloud now`;
        }}
      >
        <h3 id="cloud-url-title">Cloud</h3>
        <Field label="Cloud URL on the controller" value={url} onValue={setUrl} hint="http(s)://… of the fleet cloud; empty to forget it. The cloud must know the controller (fleet device enroll)." />
        <Button type="submit" busy={action.busy}>
          Save cloud URL
        </Button>
      </ActionForm>
      <section class="panel" aria-labelledby="cloud-backup-title">
        <h3 id="cloud-backup-title">Cloud backup</h3>
        <p class="detail">The controller encrypts its backup on-device; the cloud never sees the configuration.</p>
        <div class="actions">
          <Button busy={action.busy} onClick={() => action.run(async () => {
            const r = await api.pushCloud({ id });
            return r.result === 'unchanged' ? `The cloud already holds this backup (ETag ${shortEtag(r.etag ?? null)})` : `Backed up to the cloud: ETag ${shortEtag(r.etag ?? null)}${r.last_backup_date ? ` at ${r.last_backup_date}` : ''}`;
          })}>
            Back up to the cloud
          </Button>
          <Button busy={action.busy} onClick={() => action.run(async () => {
            const r = await api.retrieveCloud({ id });
            onChanged();
            return `Retrieved from the cloud: ${r.size} bytes written to the controller, ETag ${shortEtag(r.etag)}${r.state.deployment_required ? ' (it differs from this site: Pull to import it, or Deploy to replace it)' : ''}`;
          })}>
            Retrieve from the cloud
          </Button>
          <Button busy={action.busy} onClick={() => setConfirmDelete(true)}>
            Delete the cloud backup
          </Button>
        </div>
        {confirmDelete && (
          <div class="confirm" role="group" aria-label="Confirm delete">
            <p>Delete {name}'s backup in the cloud for good? The controller's local backup is removed too.</p>
            <Button onClick={() => {
              setConfirmDelete(false);
              void action.run(async () => {
                await api.deleteCloud({ id });
                onChanged();
                return 'The cloud backup is deleted';
              });
            }}>
              Delete for good
            </Button>
            <Button onClick={() => setConfirmDelete(false)}>Cancel</Button>
          </div>
        )}
      </section>
      <Message outcome={action.outcome} testId="cloud-message" />
    </div>
  );
}
