// Commodetto's PixelsOut (documentation/commodetto/commodetto.md "PixelsOut"): where a renderer
// sends pixels: begin(x, y, width, height), send(pixels, offset, count), end(); width, height,
// pixelFormat; adaptInvalid(area) widens an area to what the display can update.
export default class PixelsOut {
  constructor(readonly dictionary: { width: number; height: number; pixelFormat: number }) {}
  get width(): number {
    return this.dictionary.width;
  }
  get height(): number {
    return this.dictionary.height;
  }
  get pixelFormat(): number {
    return this.dictionary.pixelFormat;
  }
  begin(_x: number, _y: number, _width: number, _height: number): void {}
  send(_pixels: ArrayBuffer, _offset?: number, _count?: number): void {}
  end(): void {}
  adaptInvalid(_area: { x: number; y: number; w: number; h: number }): void {}
  pixelsToBytes(count: number): number {
    return count;
  }
}
