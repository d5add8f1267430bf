// What the inventory knows of one device (enrolment, groups, last OTA check, offer, last backup), as the
// devices table opens it and a device's page shows it.
import type { Device } from '../types.ts';
import { when } from '../ui.tsx';

export function DeviceDetails({ d }: { d: Device }) {
  return (
    <dl class="details" aria-label={`device ${d.uuid}`}>
      <dt>UUID</dt>
      <dd class="mono">{d.uuid}</dd>
      <dt>Label</dt>
      <dd>{d.label ?? '—'}</dd>
      <dt>Enrolled</dt>
      <dd>{when(d.enrolled_at)}</dd>
      <dt>Groups</dt>
      <dd>{d.groups.join(', ') || '—'}</dd>
      <dt>Last OTA check</dt>
      <dd>{d.last_check ? `${when(d.last_check.at)}: ${d.last_check.version} on ${d.last_check.class}/${d.last_check.product_hex}/${d.last_check.application}` : 'never'}</dd>
      <dt>Offered</dt>
      <dd>{d.offer ? `${d.offer.version} (from ${d.offer.from_version}) at ${when(d.offer.at)}` : '—'}</dd>
      <dt>Last backup</dt>
      <dd>{d.backup ? `${when(d.backup.last_backup_date)}, ${d.backup.size.toLocaleString('en-US')} bytes, ETag ${d.backup.etag ?? '—'}` : 'none'}</dd>
    </dl>
  );
}
