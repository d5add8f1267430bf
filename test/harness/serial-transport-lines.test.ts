// node-serialport's set() writes every modem line and defaults those not given (DTR and RTS to
// true), so the serial transport passes both lines on every change. A real USB-UART bridge is not
// attached here, so this checks the calls the transport makes on a port object (the seam); a
// pseudo-terminal's ENOTTY is checked on a real one in esptool-pty.test.ts.
import { describe, expect, it } from 'vitest';
import { runResetSequence, SEQUENCES } from '../../harness/transport/reset-sequence.ts';
import { SerialPortTransport, type NodePortLike } from '../../harness/transport/serial.ts';
import { NoModemLinesError } from '../../harness/transport/transport.ts';

function recordingPort(setError?: Error): { port: NodePortLike; sets: { dtr: boolean; rts: boolean }[] } {
  const sets: { dtr: boolean; rts: boolean }[] = [];
  let open = false;
  const port: NodePortLike = {
    get isOpen() {
      return open;
    },
    open: (cb) => ((open = true), cb(null)),
    close: (cb) => ((open = false), cb(null)),
    write: (_d, cb) => (cb(null), true),
    drain: (cb) => cb(null),
    flush: (cb) => cb(null),
    set: (flags, cb) => {
      sets.push({ ...flags });
      cb(setError ?? null);
    },
    update: (_o, cb) => cb(null),
    on: () => port,
    off: () => port,
  };
  return { port, sets };
}

describe('the serial transport', () => {
  it('gives set() both DTR and RTS on every change, so one line never moves the other', async () => {
    const { port, sets } = recordingPort();
    const t = new SerialPortTransport('/dev/ttyUSB0', () => port);
    await t.connect(115200);
    await runResetSequence(t, SEQUENCES.classic.download);
    expect(sets).toEqual([
      { dtr: false, rts: false },
      { dtr: false, rts: true },
      { dtr: true, rts: true },
      { dtr: true, rts: false },
      { dtr: false, rts: false },
    ]);
    for (const s of sets) expect(Object.keys(s).sort()).toEqual(['dtr', 'rts']);
  });

  it('says a port without modem lines has none (ENOTTY)', async () => {
    const { port } = recordingPort(new Error('Error: Inappropriate ioctl for device, cannot set'));
    const t = new SerialPortTransport('/dev/pts/7', () => port);
    await t.connect(115200);
    await expect(t.setRTS(true)).rejects.toBeInstanceOf(NoModemLinesError);
  });

  it('refuses to drive lines of a port that is not open', async () => {
    const t = new SerialPortTransport('/dev/ttyUSB0', () => recordingPort().port);
    await expect(t.setDTR(true)).rejects.toThrow('/dev/ttyUSB0 is not open');
  });
});
