// The RFC 2217 port's reset recogniser, as Espressif's esp_rfc2217_server has one in front of a
// board's USB-UART bridge: a client that waits for each SET-CONTROL answer (pyserial waits at least
// 50 ms) changes DTR and RTS tens of milliseconds apart, while the reset sequences rely on the two
// lines changing together (docs/physical-rig.md). So the server recognises the step of a sequence
// that releases EN into download mode and performs it itself, with the chip's timing: EN released
// with IO0 low in one step, IO0 held low for RELEASE_HOLD_MS (esptool's reset delay), after which
// the chip's lines follow the client's again. Every other change reaches the pins at once, as
// before, so a client that sends the lines fast gets what a real board would do with them.
//   - Classic (esptool's ClassicReset, D0|R1|W100|D1|R0|W50|D0): DTR asserted while the client
//     holds EN low (RTS asserted, DTR not) is that sequence's D1|R0.
//   - USB-Serial/JTAG (esptool's UsbJtagSerialReset, R0|D0|W100|D1|R0|W100|R1|D0|R1|W100|R0|D0):
//     DTR alone asserted for the sequence's W100, then RTS and at once DTR released (EN held low
//     with the download request seen), then RTS released: that release is into download mode. The
//     two waits tell it from a client that opened the port with DTR then RTS asserted (pyserial
//     does) and then pulses EN with D0|R1|W100|R0, the hard reset, which must boot the app.
// The hard reset (D0|R1|W100|R0) needs no help: EN is released with IO0 high whatever the pace.

/** How long the server holds IO0 low over the release it performs (esptool's DEFAULT_RESET_DELAY is 50 ms). */
export const RELEASE_HOLD_MS = 50;

export interface Lines {
  dtr: boolean;
  rts: boolean;
}

type State = 'idle' | 'held' | 'dtr-alone' | 'both' | 'usb-held';

/** The USB-Serial/JTAG sequence's DTR-alone phase is its W100: at least this long. */
const USB_DTR_ALONE_MIN_MS = 90;
/** Its both-asserted phase is R1|D0 back to back: at most a few answers' round trips. */
const USB_BOTH_MAX_MS = 500;

export class ResetRecogniser {
  /** The lines as the client set them. */
  private client: Lines = { dtr: false, rts: false };
  private state: State = 'idle';
  private hold: NodeJS.Timeout | undefined;
  /** When the current state began. */
  private since = performance.now();
  /** Releases performed on the server side (for the log and tests). */
  performed: ('classic' | 'usb-jtag')[] = [];

  constructor(private readonly pins: (lines: Partial<Lines>) => void) {}

  /** A SET-CONTROL from the client. */
  set(lines: Partial<Lines>): void {
    const before = this.client;
    this.client = { dtr: lines.dtr ?? before.dtr, rts: lines.rts ?? before.rts };
    const c = this.client;
    const enLow = c.rts && !c.dtr;
    const wasEnLow = before.rts && !before.dtr;
    // The classic sequence's D1 while EN is held low: its D1|R0, done here in one step.
    if (wasEnLow && lines.dtr === true) return this.release('classic');
    // The USB-Serial/JTAG sequence's final R0, after DTR alone, both, then EN held low.
    if (wasEnLow && lines.rts === false && this.state === 'usb-held') return this.release('usb-jtag');
    const next = this.next(c, enLow);
    if (next !== this.state) {
      this.since = performance.now();
      this.state = next;
    }
    // During a hold the chip keeps the lines the server gave it, unless the client holds EN low again.
    if (this.hold && !enLow) return;
    this.endHold();
    this.pins(lines);
  }

  private next(c: Lines, enLow: boolean): State {
    if (c.dtr && !c.rts) return 'dtr-alone';
    const elapsed = performance.now() - this.since;
    if (c.dtr && c.rts) return this.state === 'both' || (this.state === 'dtr-alone' && elapsed >= USB_DTR_ALONE_MIN_MS) ? 'both' : 'idle';
    if (enLow) return this.state === 'usb-held' || (this.state === 'both' && elapsed <= USB_BOTH_MAX_MS) ? 'usb-held' : 'held';
    return 'idle';
  }

  private release(kind: 'classic' | 'usb-jtag'): void {
    this.state = 'idle';
    this.performed.push(kind);
    this.endHold();
    this.pins({ dtr: true, rts: false });
    this.hold = setTimeout(() => {
      this.hold = undefined;
      this.pins(this.client);
    }, RELEASE_HOLD_MS);
  }

  private endHold(): void {
    clearTimeout(this.hold);
    this.hold = undefined;
  }

  /** The client went away: the lines drop now, whatever was under way. */
  hangUp(): void {
    this.endHold();
    this.state = 'idle';
    this.client = { dtr: false, rts: false };
    this.pins({ dtr: false, rts: false });
  }
}
