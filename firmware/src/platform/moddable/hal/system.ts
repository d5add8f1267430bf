/// <reference path="../native/native.d.ts" />
// The System HAL on an ESP32-S3: who the board is, restart (esp_restart), and OTA through the SDK's
// ESP32 `ota` module (build/devices/esp32/modules/ota: esp_ota_begin / esp_ota_write, then
// esp_ota_end + esp_ota_set_boot_partition in `complete`), with the app-slot queries that module
// lacks from native/fw_ota.c. With CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE (sdkconfig/) a new image
// boots in PENDING_VERIFY and is rolled back by the bootloader unless it marks itself valid
// (core/ota/client.ts confirmRunningApp, called by main.ts once the firmware is up).
import OTA from 'ota';
import Preference from 'preference';
import { crashKindNamed, resetReasonNamed } from '../../../hal/reasons.ts';
import { isUuid } from '../../../core/ids.ts';
import type { AppSlotInfo, DeviceIdentity, HeapReport, LastRun, OtaWriter, System } from '../../../hal/system.ts';
import type { BoardConfig } from './board-config.ts';
import { macText } from './buffers.ts';

const restart = native('xs_fw_restart');
const factoryMac = native('xs_fw_mac_address');
const runningSlot = native('xs_fw_ota_running_app');
const lastInvalidSlot = native('xs_fw_ota_last_invalid_app');
const markValid = native('xs_fw_ota_mark_valid');
const otaRefusal = native('xs_fw_ota_refusal');
const otaSlotBytes = native('xs_fw_ota_slot_bytes');
const lastRunFields = native('xs_fw_last_run');
const heapFigures = native('xs_fw_heap');

/** NVS (Moddable's `preference` module, modules/files/preference/esp32) where a factory may store a UUID. */
const UUID_DOMAIN = 'fleet';
const UUID_KEY = 'uuid';

function slotInfo([partition, version, projectName, state, secureVersion]: [string, string, string, string, number]): AppSlotInfo {
  return { partition, version, projectName, state, secureVersion };
}

/** native/fw_system.c's answer as the HAL says it. */
function lastRunOf([reason, by, kind, message, where]: [string, string, string, string, string]): LastRun {
  const last: LastRun = { reason: resetReasonNamed(reason) };
  if (by) last.by = by;
  if (kind) last.crash = { kind: crashKindNamed(kind), message, ...(where ? { where } : {}) };
  return last;
}

/**
 * The board's UUID: the manifest's `uuid` when a build fixes it; else the one written into NVS at
 * manufacturing (Preference fleet/uuid); else `<hardware class>-<factory MAC>`, unique per chip
 * (eFuse BLK0) and within the UUID grammar of core/ids.ts.
 */
export function boardUuid(config: BoardConfig): string {
  if (config.uuid) return config.uuid;
  let stored: unknown;
  try {
    stored = Preference.get(UUID_DOMAIN, UUID_KEY);
  } catch {
    stored = undefined; // no NVS entry
  }
  if (typeof stored === 'string' && isUuid(stored)) return stored;
  return `${config.hardwareClass}-${macText(factoryMac('base')).replace(/:/g, '').toLowerCase()}`;
}

export function boardIdentity(config: BoardConfig): DeviceIdentity {
  return {
    uuid: boardUuid(config),
    role: config.role,
    ...(config.role === 'controller' ? { ethernetMac: macText(factoryMac('ethernet')) } : {}),
    wifiMac: macText(factoryMac('station')),
    hardwareClass: config.hardwareClass,
    productHex: config.productHex,
    // The running image's esp_app_desc_t, never a setting (DESIGN.md section 7).
    firmwareVersion: slotInfo(runningSlot()).version,
    build: config.build,
  };
}

export class EspSystem implements System {
  constructor(
    private readonly who: DeviceIdentity,
    /** The platform's log (hal/board.ts): the reason of a restart is on the console and in the event log before the reset. */
    private readonly log: (message: string) => void = () => {},
  ) {}

  identity(): DeviceIdentity {
    return this.who;
  }

  reboot(reason: string): void {
    this.log(`restart: ${reason}`);
    restart(reason); // kept in RTC memory: the next boot's lastRun().by
  }

  lastRun(): LastRun {
    return lastRunOf(lastRunFields());
  }

  heapReport(): HeapReport {
    const [chunk, chunkPeak, slots, slotsPeak, largestFreeBlock, minFreeHeap] = heapFigures();
    return { chunk, chunkPeak, slots, slotsPeak, largestFreeBlock, minFreeHeap };
  }

  otaSlotBytes(): number {
    return otaSlotBytes();
  }

  runningApp(): AppSlotInfo {
    return slotInfo(runningSlot());
  }

  lastInvalidApp(): AppSlotInfo | null {
    const slot = lastInvalidSlot();
    return slot ? slotInfo(slot) : null;
  }

  markAppValid(): boolean {
    return markValid();
  }

  otaBegin(size: number): OtaWriter {
    if (!Number.isInteger(size) || size <= 0) throw new Error(`OTA image size must be a positive integer, got ${size}`);
    // esp_ota_begin refuses too (ESP_ERR_OTA_ROLLBACK_INVALID_STATE); this says why.
    if (this.runningApp().state === 'pending_verify') throw new Error('the running image is not confirmed yet');
    const ota = new OTA(); // the passive slot: esp_ota_get_next_update_partition
    let open = true;
    let written = 0;
    return {
      write: (chunk) => {
        ota.write(chunk);
        written += chunk.length;
      },
      finish: () => {
        // The SDK's ota.complete() says only "end failed": the chip says first why it would refuse
        // the image (its signature, anti-rollback), and the boot slot is then left as it is.
        const refused = otaRefusal(written);
        if (refused) {
          open = false;
          ota.cancel();
          throw Object.assign(new Error(refused[1]), { code: refused[0] });
        }
        open = false;
        ota.complete(); // esp_ota_end verifies the image; throws when it is invalid
      },
      abort: () => {
        if (open) ota.cancel();
        open = false;
      },
    };
  }
}
