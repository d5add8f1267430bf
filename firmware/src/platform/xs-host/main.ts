// The firmware's entry on a virtual board: the host evaluates this bundle in XS, then sends commands
// (docs/xs-engine.md): boot, http, timer, console, associated, status. Each answer is set on the
// returned object's `result` when the command's work has settled.
import { Device } from '../../core/device.ts';
import { confirmRunningApp } from '../../core/ota/client.ts';
import type { FirmwareSettings } from '../../core/settings.ts';
import type { DeviceIdentity } from '../../hal/system.ts';
import { createXsHostHal, type Inbound } from './hal.ts';
import { decodeFrame, encodeFrame, toArrayBuffer } from '../../../sim/wire.ts';

interface Command {
  type: 'boot' | 'http' | 'timer' | 'console' | 'associated' | 'status' | 'pubkey';
  identity?: DeviceIdentity;
  settings?: Partial<FirmwareSettings>;
  adminPassword?: string;
  id?: number;
  line?: string;
  mac?: string;
  request?: Parameters<Inbound['http']>[0];
}

let device: Device | undefined;
let inbound: Inbound | undefined;

function run(command: Command): Promise<unknown> | unknown {
  if (command.type === 'boot') {
    if (!command.identity) throw new Error('boot needs an identity');
    const created = createXsHostHal(command.identity);
    inbound = created.inbound;
    const booted = new Device(created.hal, { settings: command.settings ?? {}, ...(command.adminPassword ? { initialAdminPassword: command.adminPassword } : {}) });
    device = booted;
    // The firmware is up once its boot has finished (storage repaired, listeners serving): a new
    // image confirms itself now; a crash or reset before this point rolls it back.
    return booted.boot().then((result) => {
      const confirmed = confirmRunningApp(created.hal);
      if (confirmed) booted.log('info', 'ota', confirmed);
      return result;
    });
  }
  if (!device || !inbound) throw new Error('not booted');
  switch (command.type) {
    case 'http':
      return inbound.http(command.request!);
    case 'timer':
      return inbound.timer(command.id!);
    case 'console':
      return inbound.consoleLine(command.line!);
    case 'associated':
      return inbound.associated(command.mac!);
    case 'status':
      return device.status();
    case 'pubkey':
      return device.publicKeyPem();
  }
}

(globalThis as unknown as { handleCommand: (m: ArrayBuffer) => { result?: ArrayBuffer } }).handleCommand = (message) => {
  const out: { result?: ArrayBuffer } = {};
  const ok = (value: unknown) => (out.result = toArrayBuffer(encodeFrame({ ok: true, value: value ?? null })));
  const fail = (err: unknown) => (out.result = toArrayBuffer(encodeFrame({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) })));
  try {
    Promise.resolve(run(decodeFrame(new Uint8Array(message)).json as Command)).then(ok, fail);
  } catch (err) {
    fail(err);
  }
  return out;
};
