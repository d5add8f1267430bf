// Commodetto's Bitmap (documentation/commodetto/commodetto.md "Bitmap"): width, height, pixel
// format, the buffer and the offset of its first pixel. Pixel formats as the SDK numbers them
// (commodetto/commodettoBitmapFormat.h); the emulation draws Monochrome sources into Gray256.
export default class Bitmap {
  static readonly Default = 7;
  static readonly Raw = 0;
  static readonly Monochrome = 3;
  static readonly Gray16 = 4;
  static readonly Gray256 = 5;
  static readonly RGB332 = 6;
  static readonly RGB565LE = 7;
  static readonly RGB565BE = 8;
  static readonly RGBA32 = 9;

  constructor(
    readonly width: number,
    readonly height: number,
    readonly pixelFormat: number,
    readonly buffer: ArrayBuffer,
    readonly offset: number,
  ) {
    if (!(buffer instanceof ArrayBuffer)) throw new TypeError('Bitmap: buffer required');
    if (pixelFormat === Bitmap.Monochrome && offset + Math.ceil(width / 8) * height > buffer.byteLength) throw new RangeError('Bitmap: buffer too small');
  }
}
