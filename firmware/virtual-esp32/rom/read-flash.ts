// The stub's READ_FLASH (esptool docs, "Serial Protocol", Reading Flash): after the command's
// response, the stub sends the data as raw SLIP packets of the requested size, never more than the
// allowed number of unacknowledged packets ahead; the host acknowledges each with a 4-byte packet
// holding the total it has received; at the end the stub sends the 16-byte MD5 of all the data.
import { createHash } from 'node:crypto';
import { u32 } from '../../image/bytes.ts';
import type { FlashImage } from '../flash-image.ts';

export class ReadFlashSession {
  private sent = 0;
  private acked = 0;
  private readonly md5 = createHash('md5');
  done = false;

  constructor(
    private readonly flash: FlashImage,
    private readonly offset: number,
    private readonly length: number,
    private readonly packetBytes: number,
    private readonly maxUnacked: number,
    private readonly send: (packet: Uint8Array) => void,
  ) {}

  start(): void {
    this.pump();
  }

  /** An acknowledgement from the host; false when the packet is not one (the session then ends). */
  ack(packet: Uint8Array): boolean {
    if (packet.length !== 4) {
      this.done = true;
      return false;
    }
    this.acked = Math.max(this.acked, u32(packet, 0));
    this.pump();
    return true;
  }

  private pump(): void {
    while (this.sent < this.length && this.sent - this.acked < this.maxUnacked * this.packetBytes) {
      const n = Math.min(this.packetBytes, this.length - this.sent);
      const chunk = this.flash.read(this.offset + this.sent, n);
      this.md5.update(chunk);
      this.send(chunk);
      this.sent += n;
    }
    if (this.sent >= this.length && this.acked >= this.length && !this.done) {
      this.done = true;
      this.send(new Uint8Array(this.md5.digest()));
    }
  }
}
