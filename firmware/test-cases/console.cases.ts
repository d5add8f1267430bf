// The serial console (docs/serial-console.md): one answer line per command, OLED mirrored.
import { equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, clientConfig, login, typeConsole as type } from './fixtures.ts';
import { REBOOT_GRACE_MS } from '../src/core/reboot.ts';


export const consoleCases: TestCase[] = [
  {
    name: 'status, prov on/off, unknown commands and bad arguments',
    async run() {
      const b = bench();
      const c = board(b, { role: 'controller' });
      await c.device.boot();
      const status = JSON.parse((await type(c, 'status')).slice(3));
      equal(status.uuid, c.identity.uuid, 'uuid');
      equal(status.wifi_mac, c.identity.wifiMac, 'wifi_mac');
      equal(status.ethernet_mac, c.identity.ethernetMac, 'ethernet_mac');
      equal(status.configured, false, 'configured');
      ok((await type(c, 'prov on')).includes('"ssid":"Device-Provisioning"'), 'prov on answers the SSID');
      equal(b.air.aps.size, 1, 'SoftAP up');
      equal(await type(c, 'prov off'), 'OK {"active":false}', 'prov off');
      equal(b.air.aps.size, 0, 'SoftAP down');
      ok((await type(c, 'launch rockets')).startsWith('ERR unknown_command'), 'unknown command');
      ok((await type(c, 'password short')).startsWith('ERR invalid_password'), 'short password');
      ok((await type(c, 'cloud ftp://x')).startsWith('ERR usage'), 'bad cloud URL');
      ok(c.consoleOut.some((l) => l.startsWith('LOG INFO boot: controller')), 'log lines');
    },
  },
  {
    name: 'pubkey prints the identity key as PEM; factory-reset clears the board and reboots',
    async run() {
      const b = bench();
      const c = board(b, { role: 'controller' });
      await c.device.boot();
      const auth = await login(c);
      await call(c, 'PUT', '/api/clients/lamp-1', { headers: auth, body: clientConfig('02:00:00:00:00:01') });
      await call(c, 'PUT', '/backup', { headers: auth, body: '{}' });
      const pem = JSON.parse((await type(c, 'pubkey')).slice(3)).public_key_pem as string;
      ok(/^-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/.test(pem), 'a P-256 SPKI PEM');
      ok((await type(c, 'factory-reset')).startsWith('OK {"removed_records":1'), 'factory reset');
      equal(c.reboots.length, 0, 'the answer first: the reboot comes after the grace (core/reboot.ts)');
      await b.clock.advance(REBOOT_GRACE_MS);
      equal(c.reboots[0], 'factory reset', 'rebooted');
      equal(c.device.records.list('clients').length, 0, 'records gone');
      equal(c.device.local.size(), null, 'backup gone');
      equal((await call(c, 'POST', '/api/login', { body: { password: 'correct horse battery' } })).status, 401, 'password gone');
    },
  },
];
