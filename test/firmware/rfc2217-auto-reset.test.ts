// The RFC 2217 port's reset recogniser (harness/transport/rfc2217-reset.ts) between a
// client's SET-CONTROLs and the chip's strapping pins (strapping.ts): esptool's classic and
// USB-Serial/JTAG sequences reach download mode whether the client sends the lines fast or waits
// 50 ms for each answer, as pyserial does; the hard reset still boots the app, also right after a
// pyserial-style open (DTR, then RTS asserted); and the lines drop when the client goes away.
import { afterEach, describe, expect, it } from 'vitest';
import { ResetRecogniser, RELEASE_HOLD_MS } from '../../harness/transport/rfc2217-reset.ts';
import { LATCH_MS, StrappingPins, type BootMode } from '../../firmware/virtual-esp32/strapping.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let pins: StrappingPins | undefined;

function rig() {
  const starts: BootMode[] = [];
  let resets = 0;
  pins = new StrappingPins(
    () => void resets++,
    (mode) => void starts.push(mode),
  );
  const chipLines: { dtr?: boolean; rts?: boolean }[] = [];
  const p = pins;
  const r = new ResetRecogniser((l) => {
    chipLines.push(l);
    p.setLines(l);
  });
  return { r, starts, resets: () => resets, chipLines };
}

/** Plays `D0|R1|W100|…` on the recogniser, `paceMs` after each line change (a client waiting for answers). */
async function play(r: ResetRecogniser, sequence: string, paceMs: number): Promise<void> {
  for (const step of sequence.split('|')) {
    if (step.startsWith('W')) await sleep(Number(step.slice(1)));
    else {
      r.set(step[0] === 'D' ? { dtr: step[1] === '1' } : { rts: step[1] === '1' });
      if (paceMs > 0) await sleep(paceMs);
    }
  }
  await sleep(RELEASE_HOLD_MS + LATCH_MS + 20);
}

const CLASSIC = 'D0|R1|W100|D1|R0|W50|D0';
const USB_JTAG = 'R0|D0|W100|D1|R0|W100|R1|D0|R1|W100|R0|D0';
const HARD = 'D0|R1|W100|R0';

afterEach(() => pins?.dispose());

describe('the RFC 2217 reset recogniser', () => {
  it('takes the classic sequence into download mode, sent fast or 55 ms apart', { timeout: 10_000 }, async () => {
    for (const pace of [0, 55]) {
      const { r, starts } = rig();
      await play(r, CLASSIC, pace);
      expect(starts).toEqual(['download']);
      expect(r.performed).toEqual(['classic']);
      r.hangUp();
    }
  });

  it('without it, the classic sequence sent 55 ms apart boots the app: what a paced client got before', { timeout: 10_000 }, async () => {
    const starts: BootMode[] = [];
    pins = new StrappingPins(() => undefined, (mode) => void starts.push(mode));
    const p = pins;
    const direct = { set: (l: { dtr?: boolean; rts?: boolean }) => p.setLines(l) } as unknown as ResetRecogniser;
    await play(direct, CLASSIC, 55);
    expect(starts).toEqual(['flash']);
  });

  it('takes the USB-Serial/JTAG sequence into download mode, sent fast or 55 ms apart', { timeout: 10_000 }, async () => {
    for (const pace of [0, 55]) {
      const { r, starts } = rig();
      await play(r, USB_JTAG, pace);
      expect(starts).toEqual(['download']);
      expect(r.performed).toEqual(['usb-jtag']);
      r.hangUp();
    }
  });

  it('boots the app with the hard reset, also right after a pyserial-style open (DTR, then RTS)', { timeout: 10_000 }, async () => {
    for (const pace of [0, 55]) {
      const { r, starts } = rig();
      await play(r, 'D1|R1', pace);
      await play(r, HARD, pace);
      expect(starts).toEqual(['flash']);
      expect(r.performed).toEqual([]);
      r.hangUp();
    }
  });

  it("gives the chip the client's lines again after the hold, and drops both when the client goes away", { timeout: 10_000 }, async () => {
    const { r, chipLines } = rig();
    await play(r, 'D0|R1|W100|D1', 0);
    // The client never sent R0: after the hold the chip has DTR and RTS as the client set them.
    expect(chipLines.at(-1)).toEqual({ dtr: true, rts: true });
    r.hangUp();
    expect(chipLines.at(-1)).toEqual({ dtr: false, rts: false });
  });
});
