// SLIP framing (RFC 1055) as the ESP32 UART bootloader uses it (esptool docs, "Serial Protocol",
// Low Level Protocol): every packet begins and ends with 0xC0; inside, 0xC0 is sent as 0xDB 0xDC and
// 0xDB as 0xDB 0xDD. Bytes outside a packet (the ROM's own log, noise) are dropped.

/** Frame delimiter. */
export const SLIP_END = 0xc0;
/** Escape byte. */
export const SLIP_ESC = 0xdb;
/** 0xDB 0xDC stands for 0xC0 in a packet. */
export const SLIP_ESC_END = 0xdc;
/** 0xDB 0xDD stands for 0xDB in a packet. */
export const SLIP_ESC_ESC = 0xdd;

export function slipEncode(packet: Uint8Array): Uint8Array {
  const out: number[] = [SLIP_END];
  for (const b of packet) {
    if (b === SLIP_END) out.push(SLIP_ESC, SLIP_ESC_END);
    else if (b === SLIP_ESC) out.push(SLIP_ESC, SLIP_ESC_ESC);
    else out.push(b);
  }
  out.push(SLIP_END);
  return Uint8Array.from(out);
}

/** Collects packets from a byte stream; a bad escape makes the packet invalid (it is dropped and counted). */
export class SlipDecoder {
  private packet: number[] | null = null;
  private escaping = false;
  private bad = false;
  /** Packets dropped for a bad escape sequence. */
  invalid = 0;

  constructor(private readonly onPacket: (packet: Uint8Array) => void) {}

  push(bytes: Uint8Array): void {
    for (const b of bytes) {
      if (b === SLIP_END) {
        if (this.packet && this.packet.length > 0) {
          if (this.bad) this.invalid++;
          else this.onPacket(Uint8Array.from(this.packet));
        }
        this.packet = [];
        this.escaping = false;
        this.bad = false;
      } else if (this.packet === null) {
        continue; // outside a packet
      } else if (this.escaping) {
        this.escaping = false;
        if (b === SLIP_ESC_END) this.packet.push(SLIP_END);
        else if (b === SLIP_ESC_ESC) this.packet.push(SLIP_ESC);
        else this.bad = true;
      } else if (b === SLIP_ESC) {
        this.escaping = true;
      } else {
        this.packet.push(b);
      }
    }
  }

  reset(): void {
    this.packet = null;
    this.escaping = false;
    this.bad = false;
  }
}
