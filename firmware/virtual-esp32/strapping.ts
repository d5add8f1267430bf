// How a DevKitC-style board is reset and put into download mode (esptool docs, "Boot Mode
// Selection"): the USB-UART bridge's DTR and RTS drive two transistors, so that
//   EN (CHIP_PU) is low  when RTS is asserted and DTR is not,
//   IO0          is low  when DTR is asserted and RTS is not,
// and the BOOT button pulls IO0 low while held. EN rises through an RC network (10 kΩ, 1 µF), and
// the chip latches its strapping pins when it leaves reset: we latch IO0 LATCH_MS after EN went
// high. That delay is also what makes the classic sequence work when DTR and RTS change one after
// the other (over RFC 2217 they are two separate SET-CONTROL commands).

/** From EN rising to the strapping latch (the RC time constant of the EN network: 10 ms). */
export const LATCH_MS = 10;

export type BootMode = 'flash' | 'download';

export class StrappingPins {
  private dtr = false;
  private rts = false;
  private bootHeld = false;
  private latch: NodeJS.Timeout | undefined;
  private latchDone: (() => void) | undefined;
  /** Resolves when the pending latch (if any) has fired or been cancelled. */
  latching: Promise<void> = Promise.resolve();

  constructor(
    private readonly onReset: () => void,
    private readonly onStart: (mode: BootMode) => void,
  ) {}

  private get enLow(): boolean {
    return this.rts && !this.dtr;
  }

  private get io0Low(): boolean {
    return this.bootHeld || (this.dtr && !this.rts);
  }

  /** The modem lines from the host (RFC 2217 SET-CONTROL, or a bridge's DTR/RTS). */
  setLines(lines: { dtr?: boolean; rts?: boolean }): void {
    const wasLow = this.enLow;
    if (lines.dtr !== undefined) this.dtr = lines.dtr;
    if (lines.rts !== undefined) this.rts = lines.rts;
    if (!wasLow && this.enLow) this.hold();
    else if (wasLow && !this.enLow) this.release();
  }

  /** The BOOT button (the bench's boot control on a board without modem lines). */
  holdBoot(held: boolean): void {
    this.bootHeld = held;
  }

  /** The bench's reset (EN pulled low and released, like the RST button). */
  pulseReset(): void {
    this.hold();
    if (!this.enLow) this.release();
  }

  /** What IO0 would be latched as now. */
  bootMode(): BootMode {
    return this.io0Low ? 'download' : 'flash';
  }

  private cancelLatch(): void {
    clearTimeout(this.latch);
    this.latch = undefined;
    this.latchDone?.();
    this.latchDone = undefined;
  }

  private hold(): void {
    this.cancelLatch();
    this.onReset();
  }

  private release(): void {
    this.cancelLatch();
    this.latching = new Promise<void>((resolve) => (this.latchDone = resolve));
    this.latch = setTimeout(() => {
      this.latch = undefined;
      if (!this.enLow) this.onStart(this.bootMode());
      this.latchDone?.();
      this.latchDone = undefined;
    }, LATCH_MS);
  }

  dispose(): void {
    this.cancelLatch();
  }
}
