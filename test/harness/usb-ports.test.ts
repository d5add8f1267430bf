// `fleet ports` reads node-serialport's list(): USB ids as hex text (lower case on Linux, upper case
// on macOS and Windows), marks Espressif's own USB and the usual bridges, and proposes a reset method.
import { describe, expect, it } from 'vitest';
import { describePorts, formatPort } from '../../harness/transport/usb-ports.ts';

// As SerialPort.list() reports them (node-serialport 13 on Linux udev, macOS IOKit, Windows SetupAPI).
const LISTED = [
  { path: '/dev/ttyS0', manufacturer: undefined, serialNumber: undefined, vendorId: undefined, productId: undefined },
  { path: '/dev/ttyUSB0', manufacturer: 'Silicon Labs', serialNumber: '0001', vendorId: '10c4', productId: 'ea60' },
  { path: '/dev/ttyACM0', manufacturer: 'Espressif', serialNumber: 'F4:12:FA:1B:2C:3D', vendorId: '303a', productId: '1001' },
  { path: '/dev/cu.usbserial-1420', manufacturer: 'wch.cn', serialNumber: undefined, vendorId: '1A86', productId: '55D4' },
  { path: 'COM7', manufacturer: 'FTDI', serialNumber: 'A50285BI', vendorId: '0403', productId: '6001' },
  { path: '/dev/ttyACM1', manufacturer: 'Arduino', vendorId: '2341', productId: '0043' },
];

describe('listing serial ports', () => {
  it('parses the ids, marks Espressif first, then the bridges, with a reset method', () => {
    const ports = describePorts(LISTED);
    expect(ports.map((p) => [p.path, p.vendorId, p.productId, p.bridge ?? null, p.espressif, p.resetMethod ?? null])).toEqual([
      ['/dev/ttyACM0', 0x303a, 0x1001, 'Espressif USB-Serial/JTAG', true, 'usb-jtag'],
      ['/dev/cu.usbserial-1420', 0x1a86, 0x55d4, 'WCH CH9102', false, 'classic'],
      ['/dev/ttyUSB0', 0x10c4, 0xea60, 'Silicon Labs CP210x', false, 'classic'],
      ['COM7', 0x0403, 0x6001, 'FTDI FT232R', false, 'classic'],
      ['/dev/ttyACM1', 0x2341, 0x0043, null, false, null],
      ['/dev/ttyS0', undefined, undefined, null, false, null],
    ]);
  });

  it('prints one line per port', () => {
    const [espressif, , , , other, none] = describePorts(LISTED);
    expect(formatPort(espressif!)).toBe('* /dev/ttyACM0             303a:1001  Espressif USB-Serial/JTAG, serial F4:12:FA:1B:2C:3D, reset usb-jtag');
    expect(formatPort(other!)).toBe('  /dev/ttyACM1             2341:0043  Arduino');
    expect(formatPort(none!)).toBe('  /dev/ttyS0               ----:----');
  });

  it('ignores ids that are not hex', () => {
    expect(describePorts([{ path: 'x', vendorId: 'zz', productId: '' }])[0]).toEqual({ path: 'x', espressif: false });
  });
});

describe('listing serial ports from sysfs (no udevadm)', () => {
  it('finds ttyUSB and ttyACM devices and the USB ids above them', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { listFromSysfs } = await import('../../harness/transport/usb-ports.ts');
    const root = mkdtempSync(join(tmpdir(), 'sysfs-'));
    try {
      // /sys/devices/…/1-1 (the USB device) / 1-1:1.0 (its interface) / ttyUSB0 ; /sys/class/tty/ttyUSB0/device → the interface
      const usb = join(root, 'devices', 'usb1', '1-1');
      mkdirSync(join(usb, '1-1:1.0'), { recursive: true });
      writeFileSync(join(usb, 'idVendor'), '10c4\n');
      writeFileSync(join(usb, 'idProduct'), 'ea60\n');
      writeFileSync(join(usb, 'manufacturer'), 'Silicon Labs\n');
      for (const tty of ['ttyUSB0', 'ttyS0']) mkdirSync(join(root, 'class', tty), { recursive: true });
      symlinkSync(join(usb, '1-1:1.0'), join(root, 'class', 'ttyUSB0', 'device'));
      expect(listFromSysfs(join(root, 'class'))).toEqual([{ path: '/dev/ttyUSB0', vendorId: '10c4', productId: 'ea60', manufacturer: 'Silicon Labs', serialNumber: undefined }]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
