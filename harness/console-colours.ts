// How `fleet monitor` colours a console line: ESP-IDF's log letters (E red, W yellow, I green, D/V
// dim), the ROM's banner dim, and the firmware's console protocol (docs/serial-console.md): errors
// red, warnings yellow, answers green, events cyan, the OLED blue, the host of a virtual board magenta.
const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, dim: 2 } as const;
export type Colour = keyof typeof CODES;

export function colourOf(line: string): Colour | null {
  if (/^E \(\d+\)|^LOG (ERROR|CRITICAL) |^ERR |^HOST .*(fault|did not start)/.test(line)) return 'red';
  if (/^W \(\d+\)|^LOG WARNING /.test(line)) return 'yellow';
  if (/^I \(\d+\)|^OK /.test(line)) return 'green';
  if (/^[DV] \(\d+\)|^(ESP-ROM:|rst:0x|configsip:|mode:|load:0x|entry 0x|SPIWP:|clk_drv:)/.test(line)) return 'dim';
  if (/^EVT /.test(line)) return 'cyan';
  if (/^OLED /.test(line)) return 'blue';
  if (/^HOST /.test(line)) return 'magenta';
  return null;
}

export function colourLine(line: string): string {
  const c = colourOf(line);
  return c ? `\x1b[${CODES[c]}m${line}\x1b[0m` : line;
}
