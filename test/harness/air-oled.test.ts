// The virtual air's range model and the OLED pictures.
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { rangeMetres, VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { OLED_HEIGHT, OLED_WIDTH, renderFramebuffer, renderPng } from '../../harness/oled.ts';

describe('virtual air', () => {
  it('reaches about 1.5 m at 2 dBm and doubles every 6 dB', () => {
    expect(rangeMetres(2)).toBeCloseTo(1.5, 5);
    expect(rangeMetres(8)).toBeCloseTo(2.99, 1);
  });

  it('a station sees and joins only APs in range for the weaker of the two TX powers, with the right password', async () => {
    const air = new VirtualAir();
    const associated: string[] = [];
    air.start({ ssid: 'Device-Provisioning', bssid: '24:0A:C4:10:00:02', password: 'ABCDEF012345', auth: 'wpa2-psk', txPowerDbm: 2, maxStations: 1, channel: 6, position: () => ({ x: 0, y: 0 }), gatewayUrl: () => 'http://127.0.0.3:1', associate: async (m) => void associated.push(m) });
    const near = { mac: '02:00:00:00:00:01', position: { x: 1, y: 0 }, txPowerDbm: 2 };
    const far = { mac: '02:00:00:00:00:02', position: { x: 2, y: 0 }, txPowerDbm: 20 };
    expect(air.scan(near).map((a) => a.ssid)).toEqual(['Device-Provisioning']);
    expect(air.scan(far)).toEqual([]);
    await expect(air.connect({ ssid: 'Device-Provisioning', password: 'WRONG', station: near })).rejects.toThrow(/WPA2/);
    await expect(air.connect({ ssid: 'Device-Provisioning', password: 'ABCDEF012345', station: far })).rejects.toThrow(/in range/);
    expect(await air.connect({ ssid: 'Device-Provisioning', password: 'ABCDEF012345', station: near })).toEqual({ gatewayUrl: 'http://127.0.0.3:1', bssid: '24:0A:C4:10:00:02', infrastructure: false }); // a board's SoftAP, not the site's Wi-Fi
    expect(associated).toEqual(['02:00:00:00:00:01']);
    const second = { ...near, mac: '02:00:00:00:00:03' };
    await expect(air.connect({ ssid: 'Device-Provisioning', password: 'ABCDEF012345', station: second })).rejects.toThrow(/one station/);
  });
});

describe('OLED pictures', () => {
  it('draws text into the 128x64 framebuffer, 8 pixels a line, and nothing for empty lines', () => {
    const fb = renderFramebuffer(['Prov OK 3C 4L', '', 'X']);
    const litInRows = (y0: number, y1: number) => fb.slice(y0 * OLED_WIDTH, y1 * OLED_WIDTH).reduce((a, b) => a + b, 0);
    expect(litInRows(0, 8)).toBeGreaterThan(40);
    expect(litInRows(8, 16)).toBe(0);
    expect(litInRows(16, 24)).toBeGreaterThan(5);
    expect(litInRows(24, OLED_HEIGHT)).toBe(0);
    expect(renderFramebuffer([]).every((p) => p === 0)).toBe(true);
  });

  it('encodes a PNG three times the panel size', () => {
    const png = PNG.sync.read(renderPng(['Prov OK got backup']));
    expect([png.width, png.height]).toEqual([OLED_WIDTH * 3, OLED_HEIGHT * 3]);
  });
});
