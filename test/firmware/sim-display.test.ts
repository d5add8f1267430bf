// The emulated Commodetto/Poco and SSD1306 (firmware/sim/xs/modules/commodetto/, ssd1306.ts) inside
// XS with the platform's own 6x8 font resources: a frame drawn with drawText reaches the host as the
// SSD1306's 1,024 bytes (pixels >= 128 lit), which read back as the text drawn; gray256 only.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SimEngine } from '../helpers/sim-engine.ts';

let engine: SimEngine;

beforeAll(async () => {
  engine = await SimEngine.start();
  await engine.run(`
    const { Poco, SSD1306, Bitmap, parseBMF, Resource } = sdk;
    globalThis.poco = new Poco(new SSD1306({ pixelFormat: Bitmap.Gray256 }), { pixels: 1024 });
    globalThis.font = parseBMF(new Resource('oled-6x8.bmf'));
    font.bitmap = new Bitmap(570, 9, Bitmap.Monochrome, new Resource('oled-6x8.bits'), 0);
    globalThis.show = (lines, color) => {
      poco.begin();
      poco.fillRectangle(poco.makeColor(0, 0, 0), 0, 0, poco.width, poco.height);
      lines.forEach((line, row) => poco.drawText(line, font, color ?? poco.makeColor(255, 255, 255), 0, row * 8));
      poco.end();
    };
  `);
}, 120_000);
afterAll(async () => {
  await engine?.close();
});

it('draws text with the BMFont into the panel, which reads back line by line (descenders included)', async () => {
  await engine.run(`show(['Prov OK 3C 4L', 'gjpqy_,;', 'ctl-xs-0001', '', '~!@#$%^&*()[]{}|'])`);
  expect(engine.frames.at(-1)).toEqual(['Prov OK 3C 4L', 'gjpqy_,;', 'ctl-xs-0001', '', '~!@#$%^&*()[]{}|']);
});

it('lights only pixels of value 128 and more (a dark gray draws nothing)', async () => {
  await engine.run(`show(['dim'], 100)`);
  expect(engine.frames.at(-1)).toEqual([]);
  await engine.run(`show(['bright'], 128)`);
  expect(engine.frames.at(-1)).toEqual(['bright']);
});

it('refuses a pixel format other than gray256, and drawing outside begin/end', async () => {
  await engine.run(`try { new sdk.SSD1306({ pixelFormat: sdk.Bitmap.RGB565LE }); report('made'); } catch (e) { report(e.message); }`);
  await engine.run(`try { poco.drawText('x', font, 255, 0, 0); report('drew'); } catch (e) { report(e.message); }`);
  expect(await engine.reports()).toEqual(['unsupported pixelFormat', 'Poco: draw outside begin/end']);
});
