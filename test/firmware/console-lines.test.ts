// The console's out lines (firmware/src/core/console/lines.ts): what the firmware writes is what the
// boards' Node side and the bench read back, one format for both.
import { describe, expect, it } from 'vitest';
import { BOOT_ENDING_EVENTS, bootEndingEventPattern, eventLine, logLine, parseEventLine, parseLogLine } from '../../firmware/src/core/console/lines.ts';

describe('console lines', () => {
  it('reads back the log lines it writes, line breaks folded into one line', () => {
    expect(logLine('INFO', 'boot', 'controller abc firmware 2026.01.01 (production)')).toBe('LOG INFO boot: controller abc firmware 2026.01.01 (production)');
    expect(parseLogLine(logLine('WARNING', 'cloud-backup', 'two\r\nlines\nhere'))).toEqual({ level: 'WARNING', source: 'cloud-backup', message: 'two lines here' });
    expect(parseLogLine('LOG INFO boot:no space')).toBeUndefined();
    expect(parseLogLine('HOST ethernet: listening on 127.0.0.2:80')).toBeUndefined();
    expect(parseLogLine('LOG INFO two words: x')).toBeUndefined();
  });

  it('reads back events, and refuses what is not an event object', () => {
    const event = { event: 'target_provisioning', result: 'provisioned', source: 'ctl-1' };
    expect(parseEventLine(eventLine(event))).toEqual(event);
    expect(parseEventLine('EVT [1,2]')).toBeUndefined();
    expect(parseEventLine('EVT {not json')).toBeUndefined();
    expect(parseEventLine('LOG INFO x: y')).toBeUndefined();
  });

  it('knows a boot-ending event by its name, as the serial bench waits for it', () => {
    const pattern = bootEndingEventPattern();
    for (const name of BOOT_ENDING_EVENTS) expect(pattern.test(eventLine({ event: name, result: 'x' }))).toBe(true);
    expect(pattern.test(eventLine({ event: 'ota_installed' }))).toBe(false);
    expect(pattern.test(`LOG INFO boot: ${eventLine({ event: 'target_provisioning' })}`)).toBe(false);
  });
});
