// Reset sequences as data, in esptool's and esptool-js's notation: commands separated by `|`,
// D<0|1> sets DTR, R<0|1> sets RTS, W<ms> waits. `D0|R1|W100|D1|R0|W50|D0` is the classic
// sequence: EN held low (RTS), then IO0 low (DTR) while EN is released, so the chip latches
// download mode. A bad sequence is an error that names the step, never a silent no-op (esptool-js's
// CustomReset returns without resetting on one).
import type { SerialTransport } from './transport.ts';

export type ResetStep = { line: 'dtr' | 'rts'; asserted: boolean } | { waitMs: number };

export class ResetSequenceError extends Error {
  override name = 'ResetSequenceError';
}

/** How a board's reset and boot pins are wired to the host (docs/physical-rig.md). */
export const RESET_METHODS = ['classic', 'usb-jtag', 'none'] as const;
export type ResetMethod = (typeof RESET_METHODS)[number];

export interface ResetSequences {
  /** Into the ROM's download mode (esptool's `--before default_reset`). */
  download: string;
  /** Out of anything into the app (esptool's HardReset: EN pulsed with IO0 high). */
  hard: string;
  /** Held in reset (EN low): the bench's "power off"; empty when the wiring cannot hold it. */
  hold: string;
  /** Out of the hold into the app: the bench's "power on". */
  release: string;
}

export const SEQUENCES: Record<ResetMethod, ResetSequences> = {
  // A USB-UART bridge (CP210x, CH340, FTDI) with the DevKitC's two-transistor circuit.
  classic: { download: 'D0|R1|W100|D1|R0|W50|D0', hard: 'D0|R1|W100|R0', hold: 'D0|R1', release: 'R0' },
  // The ESP32-S3's own USB-Serial/JTAG: the peripheral decodes DTR/RTS itself (esptool's UsbJtagSerialReset).
  'usb-jtag': { download: 'R0|D0|W100|D1|R0|W100|R1|D0|R1|W100|R0|D0', hard: 'D0|R1|W100|R0', hold: '', release: '' },
  // No lines wired (a bare UART): the operator presses BOOT and RST.
  none: { download: '', hard: '', hold: '', release: '' },
};

export function parseResetMethod(value: string): ResetMethod {
  if ((RESET_METHODS as readonly string[]).includes(value)) return value as ResetMethod;
  throw new ResetSequenceError(`reset method must be one of ${RESET_METHODS.join(', ')}: ${JSON.stringify(value)}`);
}

/** Parses `D0|R1|W100|…`; the empty string is the empty sequence. Throws on anything else. */
export function parseResetSequence(text: string): ResetStep[] {
  if (text === '') return [];
  return text.split('|').map((token, i) => {
    const m = /^([DR])([01])$|^W(\d{1,5})$/.exec(token);
    if (!m) throw new ResetSequenceError(`reset sequence ${JSON.stringify(text)}: step ${i + 1} ${JSON.stringify(token)} is not D0, D1, R0, R1 or W<milliseconds>`);
    if (m[3] !== undefined) {
      const waitMs = Number(m[3]);
      if (waitMs === 0) throw new ResetSequenceError(`reset sequence ${JSON.stringify(text)}: step ${i + 1} waits 0 ms`);
      return { waitMs };
    }
    return { line: m[1] === 'D' ? 'dtr' : 'rts', asserted: m[2] === '1' };
  });
}

export function formatResetSequence(steps: ResetStep[]): string {
  return steps.map((s) => ('waitMs' in s ? `W${s.waitMs}` : `${s.line === 'dtr' ? 'D' : 'R'}${s.asserted ? 1 : 0}`)).join('|');
}

/** Plays a sequence on a transport, one line change at a time, each awaited before the next. */
export async function runResetSequence(transport: SerialTransport, sequence: string | ResetStep[]): Promise<void> {
  const steps = typeof sequence === 'string' ? parseResetSequence(sequence) : sequence;
  for (const s of steps) {
    if ('waitMs' in s) await new Promise((r) => setTimeout(r, s.waitMs));
    else if (s.line === 'dtr') await transport.setDTR(s.asserted);
    else await transport.setRTS(s.asserted);
  }
}
