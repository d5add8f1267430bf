// The product's firmware as a virtual board flashes it: ESP-IDF app images (laid into the product's
// partition table, firmware/image/product-partitions.ts) that carry the firmware built by the Moddable SDK
// for the host (firmware/sdk-host/build.ts), one build per board configuration, as a fleet has a
// build per product (a controller, a client, a debug build, a rig's build settings). Images are built
// once per process for each configuration and version.
import { readFileSync } from 'node:fs';
import { chipByName, type ChipName, type ChipSpec } from '../image/chips.ts';
import { buildVirtualAppImage, DEFAULT_PROJECT_NAME } from '../image/virtual-payload.ts';
import { hostFirmware, variantConfig, type HostVariant } from './build.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';

export const DEFAULT_CHIP: ChipName = 'esp32s3';
export const DEFAULT_FLASH_BYTES = 8 * 1024 * 1024;

/** The controller's production build (the manifest's own config). */
export const DEFAULT_VARIANT: HostVariant = { build: 'production', role: 'controller', hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', ethernet: true };

/** The build a board of this identity runs (with a rig's build settings and listener limits). */
export function variantOf(identity: Pick<DeviceIdentity, 'role' | 'hardwareClass' | 'productHex' | 'build' | 'ethernetMac'>, o: { settings?: Record<string, number>; http?: Record<string, number> } = {}): HostVariant {
  return {
    build: identity.build,
    role: identity.role,
    hardwareClass: identity.hardwareClass,
    productHex: identity.productHex,
    ethernet: identity.role === 'controller' && !!identity.ethernetMac,
    ...(o.settings && Object.keys(o.settings).length > 0 ? { settings: o.settings } : {}),
    ...(o.http && Object.keys(o.http).length > 0 ? { http: o.http } : {}),
  };
}

/**
 * The payload of an image that verifies but never comes up: not a shared object, so the loader cannot
 * map it and the chip resets before the firmware has marked itself valid (a crash at start).
 */
export const UNLOADABLE_FIRMWARE = new TextEncoder().encode('not an ELF shared object: a firmware that cannot start\n');

const images = new Map<string, Promise<Uint8Array>>();
const firmwares = new Map<string, Promise<Uint8Array>>();

/** The SDK-built firmware of a configuration (mc.so), read once per process. */
export function firmwareOf(variant: HostVariant = DEFAULT_VARIANT): Promise<Uint8Array> {
  const key = JSON.stringify(variantConfig(variant));
  let firmware = firmwares.get(key);
  if (!firmware) {
    firmware = hostFirmware(variant).then((f) => new Uint8Array(readFileSync(f.firmware)));
    firmwares.set(key, firmware);
    firmware.catch(() => firmwares.delete(key));
  }
  return firmware;
}

/** The app image of a configuration's firmware at `version` (the version, and secure_version, go into its esp_app_desc_t). */
export function firmwareImage(version: string, o: { chip?: ChipSpec; projectName?: string; variant?: HostVariant; secureVersion?: number; dataBytes?: number } = {}): Promise<Uint8Array> {
  const chip = o.chip ?? chipByName(DEFAULT_CHIP);
  const variant = o.variant ?? DEFAULT_VARIANT;
  const key = `${chip.name}/${o.projectName ?? DEFAULT_PROJECT_NAME}/${version}/${o.secureVersion ?? 0}/${o.dataBytes ?? 0}/${JSON.stringify(variantConfig(variant))}`;
  let image = images.get(key);
  if (!image) {
    image = firmwareOf(variant).then((firmware) =>
      buildVirtualAppImage({ chip, version, firmware, ...(o.projectName ? { projectName: o.projectName } : {}), ...(o.secureVersion ? { secureVersion: o.secureVersion } : {}), ...(o.dataBytes ? { dataBytes: o.dataBytes } : {}) }),
    );
    images.set(key, image);
    image.catch(() => images.delete(key));
  }
  return image;
}

/** A built firmware as a virtual board is handed it (firmware/virtual-esp32/board-options.ts). */
export interface BoardFirmware {
  /** The build's configuration: a controller's build with Ethernet waits for its listener at boot. */
  variant: HostVariant;
  /** The host loader that maps an image's firmware (mc.so) and serves its chip calls. */
  loader: string;
  /** The app image the factory writes on a blank flash (its esp_app_desc_t carries the identity's version). */
  factoryApp: () => Promise<Uint8Array>;
}

/** The build a board of this identity runs, built (or found built), and its factory app at the identity's version. */
export async function boardFirmware(identity: Parameters<typeof variantOf>[0] & Pick<DeviceIdentity, 'firmwareVersion'>, o: { settings?: Record<string, number>; http?: Record<string, number>; chip?: ChipName; secureVersion?: number } = {}): Promise<BoardFirmware> {
  const variant = variantOf(identity, o);
  const { loader } = await hostFirmware(variant);
  const chip = chipByName(o.chip ?? DEFAULT_CHIP);
  return { variant, loader, factoryApp: () => firmwareImage(identity.firmwareVersion, { chip, variant, ...(o.secureVersion ? { secureVersion: o.secureVersion } : {}) }) };
}
