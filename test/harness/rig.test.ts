// Rig files: the shipped rigs load; a bad rig is refused naming the field and the value.
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { FileArgumentError } from '../../cloud/file-errors.ts';
import { loadRig, parseRig, RigError } from '../../harness/rig.ts';

const rigPath = (name: string) => fileURLToPath(new URL(`../../harness/rigs/${name}.json`, import.meta.url));
const board = { id: 'a', role: 'controller', kind: 'virtual', uuid: 'u-1', ethernet_mac: '24:0A:C4:E0:00:01', wifi_mac: '24:0A:C4:10:00:01', fuse_key: 'ab'.repeat(32), position: { x: 0, y: 0 } };

describe('rig files', () => {
  it('the shipped two-board and five-board rigs load', () => {
    expect(loadRig(rigPath('two-board')).boards.map((b) => b.role)).toEqual(['controller', 'controller']);
    const five = loadRig(rigPath('five-board'));
    expect(five.boards.filter((b) => b.role === 'client')).toHaveLength(3);
    expect(five.boards[0]!.build).toBe('debug');
    expect(five.mqtt).toEqual({ kind: 'aedes' });
  });

  it.each([
    [{ boards: [] }, /^rig\.boards: expected at least one board, got \[\]$/],
    [{ boards: [{ ...board, role: 'lamp' }] }, /^rig\.boards\[0\]\.role: expected controller or client, got "lamp"$/],
    [{ boards: [{ ...board, wifi_mac: '24-0a' }] }, /boards\[0\]\.wifi_mac: expected a MAC address such as 24:0A:C4:E0:00:11 \(upper case, colons\), got "24-0a"/],
    [{ boards: [{ ...board, fuse_key: 'short' }] }, /boards\[0\]\.fuse_key/],
    [{ boards: [{ ...board, position: { x: 'near' } }] }, /boards\[0\]\.position/],
    [{ boards: [board, { ...board, id: 'b' }] }, /boards\[1\]\.wifi_mac: expected a MAC address unique on the rig, got "24:0A:C4:10:00:01"/],
    [{ boards: [board, { ...board }] }, /boards\[1\]\.id: expected a board id unique on the rig, got "a"/],
    [{ boards: [{ ...board, kind: 'jtag' }] }, /kind: expected virtual, serial or rfc2217, got "jtag"/],
    [{ boards: [{ ...board, uuid: '..' }] }, /^rig\.boards\[0\]\.uuid: expected 1 to 64 of A-Z a-z 0-9 - _, starting with a letter or a digit, got "\.\."$/],
    [{ boards: [{ ...board, uuid: 'ctl:1' }] }, /boards\[0\]\.uuid: expected 1 to 64 of A-Z a-z 0-9 - _, starting with a letter or a digit, got "ctl:1"/],
    [{ boards: [{ id: 'a', role: 'controller', kind: 'serial' }] }, /boards\[0\]\.port: expected a serial port path such as \/dev\/ttyUSB0 \(rfc2217: rfc2217:\/\/host:port\), got nothing/],
    [{ boards: [{ ...board, kind: 'serial', port: '/dev/ttyUSB0' }] }, /boards\[0\]\.uuid: expected nothing: the harness reads it from a serial or rfc2217 board, got "u-1"/],
    [{ boards: [{ id: 'a', role: 'controller', kind: 'rfc2217', port: 'ttyUSB0' }] }, /^rig\.boards\[0\]\.port: expected rfc2217:\/\/host:port, got "ttyUSB0"$/],
    [{ boards: [{ id: 'a', role: 'controller', kind: 'serial', port: '/dev/ttyUSB0', reset: 'dtr' }] }, /boards\[0\]\.reset: expected classic, usb-jtag or none, got "dtr"/],
    [{ boards: [{ ...board, drive: 'serial' }] }, /boards\[0\]\.drive: expected direct or rfc2217, got "serial"/],
    [{ boards: [board], build_settings: [] }, /build_settings: expected an object of firmware settings/],
    [{ boards: [board], bench_host: 'bench.local' }, /rig\.bench_host: expected an IPv4 address, got "bench\.local"/],
    [{ boards: [board], cloud: { kind: 'external', url: 'http://10.0.0.5:8080' } }, /cloud\.url: expected a loopback http URL/],
  ])('refuses %j', (extra, message) => {
    expect(() => parseRig({ name: 'r', ...extra })).toThrow(message);
  });

  it('takes a physical board without identity (read from the board) and the RFC 2217 rig of virtual boards', () => {
    const rig = parseRig({ name: 'r', build_settings: { provisioningTokenTtlSeconds: 3 }, boards: [{ id: 'a', role: 'controller', kind: 'rfc2217', port: 'rfc2217://10.0.0.9:4000', reset: 'usb-jtag', ethernet_url: 'http://10.0.0.21' }] });
    expect(rig.boards[0]).toMatchObject({ kind: 'rfc2217', port: 'rfc2217://10.0.0.9:4000', resetMethod: 'usb-jtag', ethernetUrl: 'http://10.0.0.21', uuid: '', wifiMac: '', baudRate: 115200 });
    expect(rig.buildSettings).toEqual({ provisioningTokenTtlSeconds: 3 });
    expect(rig.benchHost).toBe('127.0.0.1');
    expect(parseRig({ name: 'r', bench_host: '192.168.10.2', boards: [board] }).benchHost).toBe('192.168.10.2');
    expect(loadRig(rigPath('rfc2217-three-board')).boards.map((b) => [b.kind, b.drive])).toEqual([
      ['virtual', 'rfc2217'],
      ['virtual', 'rfc2217'],
      ['virtual', 'rfc2217'],
    ]);
  });

  it('names the file when it is not JSON or missing', () => {
    expect(() => loadRig('/nonexistent/rig.json')).toThrow(new FileArgumentError('the rig file: cannot open /nonexistent/rig.json: no such file or folder; check the path'));
  });
});
