// A scenario a rig cannot run is "not applicable on this rig" with the reason, decided from the rig
// file before anything starts: boards the harness cannot move or re-identify, a SoftAP it cannot
// reach, a build without the settings the scenario depends on.
import { describe, expect, it } from 'vitest';
import { parseRig } from '../../harness/rig.ts';
import { applicable } from '../../harness/runner.ts';
import { scenarios } from '../../harness/scenarios/index.ts';

const byName = (name: string) => scenarios.find((s) => s.name === name)!;
const physical = (extra: Record<string, unknown> = {}, buildSettings?: Record<string, unknown>) =>
  parseRig({
    name: 'usb-pair',
    ...(buildSettings ? { build_settings: buildSettings } : {}),
    boards: [
      { id: 'source', role: 'controller', kind: 'serial', port: '/dev/ttyUSB0', build: 'debug', ...extra },
      { id: 'target', role: 'controller', kind: 'rfc2217', port: 'rfc2217://10.0.0.9:4001' },
    ],
  });

describe('applicability on a physical rig', () => {
  it('moving boards and replacing one are for virtual boards driven directly', () => {
    expect(applicable(physical(), byName('controller-out-of-range'))).toBe('needs boards the harness can move out of radio range; source, target are driven as physical boards (on a real rig the operator moves them, by hand)');
    expect(applicable(physical(), byName('cloud-backup-replacement-board'))).toMatch(/^needs a replacement board that takes another board's UUID; source, target keep/);
  });

  it('the security scenario needs the SoftAP in reach and a build with its token lifetime', () => {
    expect(applicable(physical(), byName('provisioning-security'))).toBe("needs the harness to reach a controller's SoftAP listener; source, target have no softap_url (a Wi-Fi adapter of the bench PC joined to the SoftAP)");
    const reachable = { softap_url: 'http://192.168.4.1' };
    const rig = parseRig({ name: 'r', boards: [{ id: 'source', role: 'controller', kind: 'serial', port: '/dev/ttyUSB0', ...reachable }] });
    expect(applicable(rig, byName('provisioning-security'))).toBe('needs a build with provisioningTokenTtlSeconds=3; the rig\'s build_settings have provisioningTokenTtlSeconds="default"');
    const built = parseRig({ name: 'r', build_settings: { provisioningTokenTtlSeconds: 3 }, boards: [{ id: 'source', role: 'controller', kind: 'serial', port: '/dev/ttyUSB0', ...reachable }] });
    expect(applicable(built, byName('provisioning-security'))).toBeNull();
  });

  it('the other scenarios apply as on a virtual rig', () => {
    for (const name of ['controller-ok-backup', 'controller-count-mismatch', 'cloud-backup-round-trip', 'ota-sequential', 'ota-revoked-version', 'ota-rollback']) expect(applicable(physical(), byName(name))).toBeNull();
    expect(applicable(physical(), byName('client-provisioning'))).toBe('needs 1 clients, the rig has 0');
  });
});
