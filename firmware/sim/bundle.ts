// Bundles an app for the emulated Moddable SDK into one script for the XS worker: the SDK's module
// specifiers (`http`, `timer`, `file`, `commodetto/Poco`, `embedded:io/serial`, ...) resolve to the
// emulation in firmware/sim/xs/modules/, everything else as usual (firmware/xs/bundle.ts).
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { bundleForXs } from '../xs/bundle.ts';

const MODULES = fileURLToPath(new URL('./xs/modules/', import.meta.url));

/** Each SDK module the platform imports, and the file of its emulation. */
export const SDK_MODULES: Record<string, string> = {
  http: 'http.ts',
  socket: 'socket.ts',
  securesocket: 'securesocket.ts',
  net: 'net.ts',
  wifi: 'wifi.ts',
  ethernet: 'ethernet.ts',
  timer: 'timer.ts',
  time: 'time.ts',
  sntp: 'sntp.ts',
  file: 'file.ts',
  preference: 'preference.ts',
  Resource: 'resource.ts',
  modules: 'modules.ts',
  'mc/config': 'mc-config.ts',
  ota: 'ota.ts',
  mqtt: 'mqtt.ts',
  ssd1306: 'ssd1306.ts',
  'embedded:io/serial': 'serial.ts',
  'commodetto/Bitmap': 'commodetto/Bitmap.ts',
  'commodetto/PixelsOut': 'commodetto/PixelsOut.ts',
  'commodetto/Poco': 'commodetto/Poco.ts',
  'commodetto/parseBMF': 'commodetto/parseBMF.ts',
};

export const moddableSdk: Plugin = {
  name: 'moddable-sdk-emulation',
  setup(build) {
    build.onResolve({ filter: /^[A-Za-z][\w:/-]*$/ }, (args) => {
      const file = SDK_MODULES[args.path];
      return file ? { path: MODULES + file } : undefined;
    });
  },
};

export function bundleForSim(entry: string): Promise<string> {
  return bundleForXs(entry, { plugins: [moddableSdk] });
}

export const SIM_APP = fileURLToPath(new URL('./xs/app.ts', import.meta.url));
