// The HAL of an ESP32-S3 board (and of a virtual board: this app built by the SDK for Linux, firmware/sdk-host/),
// assembled from this folder's modules. Everything a module keeps lives in the objects made here (no module
// state, no globals), and every module of ours is preloaded (frozen in flash).
import Modules from 'modules';
import Resource from 'Resource';
import type { RandomSource } from '../../../core/crypto/pure.ts';
import { FlashEventLog } from '../../../core/event-log.ts';
import type { CryptoHal } from '../../../hal/crypto.ts';
import type { Hal } from '../../../hal/index.ts';
import type { EventLevel } from '../../../hal/output.ts';
import type { BoardConfig } from './board-config.ts';
import { BoardTimers, SntpClock } from './clock.ts';
import { UartConsole } from './console.ts';
import { HEADLESS, OledDisplay } from './display.ts';
import { efuseHmac } from './fuse.ts';
import { BoardHttpClient } from './http-client.ts';
import { InterfaceListeners } from './http-server.ts';
import { InterfaceAddresses, startEthernet } from './interfaces.ts';
import { BoardMqtt } from './mqtt.ts';
import { createPsaCrypto, hardwareRandomBytes } from './psa-crypto.ts';
import { WiFiRadio } from './radio.ts';
import { LittleFsStorage } from './storage.ts';
import { boardIdentity, EspSystem } from './system.ts';

export interface BoardHal {
  hal: Hal;
  /** The platform's own events: an event-log entry and a `LOG <LEVEL> board: …` console line, as the core's. */
  log: (level: EventLevel, message: string) => void;
  /** Objects that must live as long as the board (the Ethernet monitor). */
  keep: unknown[];
}

/**
 * The crypto HAL: PSA (the accelerators) unless the build asks for the portable @noble fallback,
 * which is then loaded on demand: it is not preloaded, so it costs no RAM in a PSA build.
 */
function boardCrypto(config: BoardConfig): CryptoHal {
  if (config.crypto === 'psa') return createPsaCrypto();
  const fallback = Modules.importNow('src/core/crypto/pure') as { createPureJsCrypto: (random: RandomSource) => CryptoHal };
  return fallback.createPureJsCrypto(hardwareRandomBytes);
}

export function createBoardHal(config: BoardConfig): BoardHal {
  const storage = new LittleFsStorage(config.fileRoot);
  const consoleHal = new UartConsole(config.console);
  const timers = new BoardTimers();
  let eventLog: FlashEventLog | undefined;
  const log = (level: EventLevel, message: string) => {
    try {
      eventLog?.append(level, 'board', message);
    } catch {
      /* a flash error must not hide the console line */
    }
    consoleHal.writeLine(`LOG ${level.toUpperCase()} board: ${message}`);
  };
  const info = (message: string) => log('info', message);
  const clock = new SntpClock(config.sntpHost, info);
  eventLog = new FlashEventLog(storage, () => clock.now());

  const addresses = new InterfaceAddresses();
  addresses.onChange((_iface, address) => {
    if (address !== undefined) clock.synchronize(); // the first interface with an address can reach SNTP
  });
  const radio = new WiFiRadio(addresses, info);
  const listeners = new InterfaceListeners(addresses, { limits: config.http, stationMacOf: (address) => radio.stationAt(address), log: info });
  const client = new BoardHttpClient({ certificate: () => (config.cloudCaResource ? new Resource(config.cloudCaResource) : undefined) });

  let display = HEADLESS;
  if (config.display) {
    try {
      display = new OledDisplay((message) => log('warning', message));
    } catch (err) {
      log('warning', `display: ${err instanceof Error ? err.message : String(err)}; running headless`);
    }
  }

  const hal: Hal = {
    storage,
    clock,
    timers,
    fuse: efuseHmac,
    crypto: boardCrypto(config),
    network: { listen: (iface, handler, memory) => listeners.listen(iface, handler, memory), request: (request) => client.request(request) },
    radio,
    display,
    eventLog,
    console: consoleHal,
    system: new EspSystem(boardIdentity(config), info),
    mqtt: new BoardMqtt(),
  };
  const ethernet = config.ethernet ? startEthernet(addresses, info) : undefined;
  return { hal, log, keep: [ethernet] };
}
