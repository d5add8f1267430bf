// Starting the firmware on a board: reads the build's configuration, assembles the HAL on Moddable
// modules and boots the portable core. main.ts (the manifest's creation.main) calls it on an
// ESP32-S3, and on a virtual board, whose firmware is this app built by the SDK for Linux
// (firmware/sdk-host/, docs/moddable-emulation.md). Once the
// core has booted (storage repaired, listeners serving) a new image confirms itself; if the start
// fails while the image is still unconfirmed the board restarts, and the bootloader rolls back to
// the previous image.
import { Device, type DeviceOptions } from '../../../core/device.ts';
import { createBoardHal, type BoardHal } from './board.ts';
import { readBoardConfig } from './board-config.ts';

export interface RunningBoard {
  board: BoardHal;
  device: Device | undefined;
  /** The core's boot result once it has booted (and a new image confirmed itself); rejects when the start failed. */
  booted: Promise<unknown>;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** `source`: the build configuration (mc/config by default); `options`: the core's (a factory's admin password, settings). */
export function startBoard(source?: Record<string, unknown>, options: DeviceOptions = {}): RunningBoard {
  const config = readBoardConfig(source);
  const board = createBoardHal(config);
  const { hal, log } = board;
  const failed = (err: unknown) => {
    log('error', `the firmware did not start: ${errorText(err)}`);
    if (hal.system.runningApp().state === 'pending_verify') hal.system.reboot('an unconfirmed image failed to start');
    throw err;
  };
  let device: Device;
  try {
    device = new Device(hal, { ...options, settings: { ...config.settings, ...options.settings } }); // derives its keys: fails here when the eFuse key is not burned
  } catch (err) {
    const booted = Promise.reject(err).catch(failed);
    booted.catch(() => {});
    return { board, device: undefined, booted };
  }
  const booted = device.boot().then((result) => {
    const confirmed = device.confirmRunningApp();
    if (confirmed) device.log('info', 'ota', confirmed);
    return result;
  }, failed);
  booted.catch(() => {}); // reported on the console by `failed`
  return { board, device, booted };
}
