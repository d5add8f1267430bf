// Cloud backup of one controller (spec 4.2): what the cloud holds for it (read when the tab opens:
// its time and ETag, against the controller's and the site's), push (the controller encrypts its
// /backup.json and uploads it), retrieve (it downloads, decrypts and writes /backup.json), delete;
// and the cloud URL the controller uses. Everything goes through the controller with this browser's
// visual-token (only it can sign a request to the cloud); the controller's own answers (not
// enrolled, clock not synchronized, no backup) are shown as it says them.
import { useEffect, useState } from 'preact/hooks';
import { api, type CloudBackupInfo } from '../api.ts';
import { ActionForm, Button, Field } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { DangerAction } from '../components/confirm.tsx';
import { Message, shortEtag } from '../components/ui.tsx';

function Held({ info }: { info: CloudBackupInfo | null }) {
  if (!info) return <p class="detail" data-testid="cloud-held">Reading what the cloud holds…</p>;
  if (!info.stored) return <p class="detail" data-testid="cloud-held">The cloud holds no backup of this controller.</p>;
  return (
    <dl class="facts" data-testid="cloud-held">
      <dt>Backed up</dt>
      <dd>{info.last_backup_date ? new Date(info.last_backup_date).toLocaleString() : 'unknown'}</dd>
      <dt>Cloud ETag</dt>
      <dd>
        <code title={info.etag ?? ''}>{shortEtag(info.etag)}</code>
      </dd>
      <dt>Against the controller</dt>
      <dd>{info.same_as_controller ? 'the same backup' : 'another backup (push to replace it)'}</dd>
      <dt>Against this site</dt>
      <dd>{info.same_as_site ? "the same as this site's configuration" : "not this site's configuration"}</dd>
    </dl>
  );
}

export function CloudTab({ id, name, loggedIn, onChanged }: { id: number; name: string; loggedIn: boolean; onChanged: () => void }) {
  const [url, setUrl] = useState('');
  const [info, setInfo] = useState<CloudBackupInfo | null>(null);
  const action = useAction();
  const held = useAction();
  const readHeld = () => held.run(async () => void setInfo(await api.cloudBackup({ id })));
  useEffect(() => {
    if (!loggedIn) return;
    void action.run(async () => setUrl((await api.cloud({ id })).url ?? ''));
    void readHeld();
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
          void readHeld();
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
        {held.outcome?.kind !== 'error' && <Held info={info} />}
        <div class="actions">
          <Button busy={held.busy} class="secondary" onClick={() => void readHeld()}>
            Read again
          </Button>
        </div>
        <Message outcome={held.outcome} testId="cloud-held-message" />
        <div class="actions">
          <Button busy={action.busy} onClick={() => action.run(async () => {
            const r = await api.pushCloud({ id });
            void readHeld();
            return r.result === 'unchanged' ? `The cloud already holds this backup (ETag ${shortEtag(r.etag ?? null)})` : `Backed up to the cloud: ETag ${shortEtag(r.etag ?? null)}${r.last_backup_date ? ` at ${r.last_backup_date}` : ''}`;
          })}>
            Back up to the cloud
          </Button>
          <Button busy={action.busy} onClick={() => action.run(async () => {
            const r = await api.retrieveCloud({ id });
            onChanged();
            void readHeld();
            return `Retrieved from the cloud: ${r.size} bytes written to the controller, ETag ${shortEtag(r.etag)}${r.state.deployment_required ? ' (it differs from this site: Pull to import it, or Deploy to replace it)' : ''}`;
          })}>
            Retrieve from the cloud
          </Button>
          <DangerAction
            label="Delete the cloud backup"
            confirmLabel="Delete for good"
            busy={action.busy}
            loss={
              <>
                Delete {name}'s backup in the cloud{info?.stored && info.last_backup_date ? ` (of ${new Date(info.last_backup_date).toLocaleString()})` : ''} for good? The controller's own backup (/backup.json) is removed too. This site keeps its configuration of {name}: Deploy writes it back.
              </>
            }
            onConfirm={() =>
              void action.run(async () => {
                await api.deleteCloud({ id });
                onChanged();
                void readHeld();
                return 'The cloud backup is deleted';
              })
            }
          />
        </div>
      </section>
      <Message outcome={action.outcome} testId="cloud-message" />
    </div>
  );
}
