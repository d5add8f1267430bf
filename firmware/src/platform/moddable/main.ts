// The firmware's entry on an ESP32-S3 (the manifest's creation.main): reads the build's configuration,
// assembles the HAL on Moddable modules and starts the portable core, as platform/xs-host/main.ts does
// on a virtual board. Once the core has booted (storage repaired, listeners serving) a new image
// confirms itself; if the start fails while the image is still unconfirmed the board restarts, and
// the bootloader rolls back to the previous image.
import { Device } from '../../core/device.ts';
import { confirmRunningApp } from '../../core/ota/client.ts';
import { createBoardHal, type BoardHal } from './hal/board.ts';
import { readBoardConfig } from './hal/board-config.ts';

export interface RunningBoard {
  board: BoardHal;
  device: Device | undefined;
}

function message(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

export function startBoard(source?: Record<string, unknown>): RunningBoard {
  const board = createBoardHal(readBoardConfig(source));
  const { hal, log } = board;
  const failed = (err: unknown) => {
    log('error', `the firmware did not start: ${message(err)}`);
    if (hal.system.runningApp().state === 'pending_verify') hal.system.reboot('an unconfirmed image failed to start');
  };
  let device: Device | undefined;
  try {
    device = new Device(hal, {}); // derives its keys: fails here when the eFuse key is not burned
  } catch (err) {
    failed(err);
    return { board, device };
  }
  const started = device;
  started.boot().then(() => {
    const confirmed = confirmRunningApp(hal);
    if (confirmed) started.log('info', 'ota', confirmed);
  }, failed);
  return { board, device };
}

try {
  startBoard();
} catch (err) {
  trace(`firmware: ${message(err)}\n`); // a bad build configuration: there is no console yet
}
