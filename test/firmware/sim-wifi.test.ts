// The emulated `wifi` module (firmware/sim/xs/modules/wifi.ts) and the Wi-Fi natives inside XS:
// accessPoint's option checks as xs6wifi.c makes them (SSID at most 32 bytes, password 8 to 64
// bytes), the AP reaching the virtual air only once WPA2-only, scans ending with null, a station's
// association reported to the AP's monitor without a MAC, and connect's notifications.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { SimEngine } from '../helpers/sim-engine.ts';

const air = new VirtualAir();
let ap: SimEngine;
let station: SimEngine;

async function thrown(engine: SimEngine, code: string): Promise<string | null> {
  await engine.run(`try { ${code}; report(null); } catch (e) { report(e.message); }`);
  return (await engine.reports())[0];
}

beforeAll(async () => {
  ap = await SimEngine.start({ air, wifiMac: '24:0A:C4:10:00:51' });
  station = await SimEngine.start({ air, wifiMac: '24:0A:C4:10:00:52', addresses: { ethernet: '127.0.0.12', ap: '127.0.0.13', station: '127.0.0.14' } });
  await ap.run(`globalThis.monitor = new sdk.WiFi(undefined, (message) => report({ ap: message }));`);
  await station.run(`globalThis.monitor = new sdk.WiFi(undefined, (message, reason) => report({ station: message, reason }));`);
}, 120_000);
afterAll(async () => {
  await ap?.close();
  await station?.close();
});

describe('WiFi.accessPoint', () => {
  it('refuses an SSID over 32 bytes (UTF-8) and a password under 8 or over 64 bytes', async () => {
    expect(await thrown(ap, `sdk.WiFi.accessPoint({ ssid: 'x'.repeat(33), password: 'password' })`)).toMatch(/ssid too long/);
    expect(await thrown(ap, `sdk.WiFi.accessPoint({ ssid: 'é'.repeat(17), password: 'password' })`)).toMatch(/ssid too long/);
    expect(await thrown(ap, `sdk.WiFi.accessPoint({ ssid: 'ok', password: '1234567' })`)).toMatch(/password too short/);
    expect(await thrown(ap, `sdk.WiFi.accessPoint({ ssid: 'ok', password: 'p'.repeat(65) })`)).toMatch(/password too long/);
    expect(await thrown(ap, `sdk.WiFi.accessPoint({ ssid: 'x'.repeat(32), password: 'p'.repeat(64) }); sdk.WiFi.mode = 0`)).toBeNull();
    expect(await thrown(ap, `sdk.WiFi.accessPoint({ ssid: 'ok', password: '12345678' }); sdk.WiFi.mode = 0`)).toBeNull();
  });

  it('goes on the air only once the native made it WPA2-only; stations then scan it, associate, and the AP hears of it without a MAC', async () => {
    await ap.run(`sdk.WiFi.accessPoint({ ssid: 'prov-ap', password: 'secret-pass', max: 1 }); report({ ip: sdk.Net.get('IP', 'ap') });`);
    expect(await ap.reports()).toEqual([{ ip: '127.0.0.3' }]);
    await station.run(`sdk.WiFi.mode = 1; sdk.WiFi.scan({}, (item) => report(item ? { ssid: item.ssid } : { end: true }));`);
    expect(await station.waitFor((r) => r.some((x) => x.end))).toEqual([{ end: true }]); // mixed mode: not on the air
    await ap.run(`native('xs_fw_wifi_softap_wpa2_only')(); globalThis.apServer = new sdk.http.Server({ address: sdk.Net.get('IP', 'ap') });`);
    await new Promise((r) => setTimeout(r, 20));
    await station.run(`sdk.WiFi.scan({}, (item) => report(item ? { ssid: item.ssid, bssid: new Uint8Array(item.bssid).length } : { end: true }));`);
    expect(await station.waitFor((r) => r.some((x) => x.end))).toEqual([{ ssid: 'prov-ap', bssid: 6 }, { end: true }]);

    await station.run(`sdk.WiFi.connect({ ssid: 'prov-ap', password: 'wrong-pass' })`);
    expect(await station.waitFor((r) => r.some((x) => x.station === 'disconnect'))).toContainEqual({ station: 'disconnect', reason: -1 });
    await station.run(`sdk.WiFi.connect({ ssid: 'prov-ap', password: 'secret-pass' })`);
    const reports = await station.waitFor((r) => r.some((x) => x.station === 'gotIP'));
    expect(reports.map((x) => x.station)).toEqual(['connect', 'gotIP']);
    expect(await ap.waitFor((r) => r.length > 0)).toEqual([{ ap: 'station_connect' }]);
    await ap.run(`report([...new Uint8Array(native('xs_fw_wifi_stations')())].map((b) => b.toString(16).padStart(2, '0')).join(':'))`);
    expect(await ap.reports()).toEqual(['24:0a:c4:10:00:52']);
    await station.run(`report({ ip: sdk.Net.get('IP', 'station'), gateway: native('xs_fw_wifi_station_gateway')() })`);
    // The gateway is the AP's SoftAP listener: its loopback address and the port that stands for 80.
    expect(await station.reports()).toEqual([{ ip: '127.0.0.14', gateway: ap.urls.ap!.replace('http://', '') }]);
  });

  it('refuses a scan while the station interface is not in the mode', async () => {
    expect(await thrown(station, `sdk.WiFi.mode = 0; sdk.WiFi.scan({}, () => {})`)).toMatch(/station/);
  });
});
