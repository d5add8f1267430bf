// What a bench run tested, for the top of its reports (HTML and JUnit): the rig file, each board
// (kind, chip, port, UUID) with its firmware (version, build, app image SHA-256 and the ESP-IDF
// version in its app descriptor), the project's commit, and the versions of Node and of the engines
// and SDKs underneath (the XS engine of virtual boards, esptool-js, node-serialport, the Moddable SDK).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { firmwareImage, variantOf } from '../firmware/sdk-host/firmware-image.ts';
import { CHIPS } from '../firmware/image/chips.ts';
import { appDescriptorOfImage } from '../firmware/image/app-desc.ts';
import { locateSdk, SdkSetupError } from '../firmware/toolchain/sdk-location.ts';
import type { BoardSpec, RigSpec } from './rig.ts';
import type { BenchImage } from './serial-board.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface BoardFirmware {
  version: string;
  build: string;
  /** SHA-256 of the app image file (what an OTA manifest names); unknown for an image the bench did not write. */
  imageSha256?: string;
  /** esp_app_desc_t: project name and ESP-IDF version (`xs-virtual-board` for a virtual board's image). */
  project?: string;
  idfVersion?: string;
  /** Where it comes from: a virtual board's factory image, the image of `--flash`, or the board's own answer. */
  source: 'factory image' | 'flashed by the bench (--flash)' | 'read from the board' | 'not read (no scenario ran on it)';
}

export interface TestbedBoard {
  id: string;
  role: string;
  kind: string;
  chip: string;
  /** virtual (in-process, or through its RFC 2217 port) or the port of a physical board. */
  where: string;
  uuid: string;
  firmware: BoardFirmware;
}

export interface Testbed {
  rigName: string;
  rigFile: string;
  rigSha256?: string;
  commit: string;
  node: string;
  software: { name: string; version: string }[];
  boards: TestbedBoard[];
}

/** HEAD of the checkout, with `+ local changes` when the work tree differs from it. */
export function projectCommit(cwd = ROOT): string {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${head} + local changes` : head;
  } catch {
    return 'unknown (not a git checkout, or git is missing)';
  }
}

function packageVersion(name: string): string {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

/** The SDK the firmware is built with, found as the build finds it ($MODDABLE, else ../shared/moddable-sdk). */
function moddableSdk(): string {
  let sdk;
  try {
    sdk = locateSdk();
  } catch (err) {
    if (err instanceof SdkSetupError) return `not found (${err.message})`;
    throw err;
  }
  return `${sdk.version} (commit ${sdk.commit.slice(0, 12)}, ${sdk.from === 'MODDABLE' ? `$MODDABLE=${sdk.root}` : sdk.from})`;
}

function fromImage(bytes: Uint8Array, build: string, source: BoardFirmware['source']): BoardFirmware {
  // The descriptor alone: the report needs no verdict on the image (describeImage checks signatures too).
  const app = appDescriptorOfImage(bytes);
  return {
    version: app?.version ?? 'unknown',
    build,
    imageSha256: createHash('sha256').update(bytes).digest('hex'),
    ...(app ? { project: app.projectName, idfVersion: app.idfVersion } : {}),
    source,
  };
}

function where(b: BoardSpec): string {
  if (b.kind === 'virtual') return b.drive === 'rfc2217' ? 'virtual, driven through its RFC 2217 port' : 'virtual, in-process';
  return b.port ?? '';
}

export async function describeTestbed(rig: RigSpec, image?: BenchImage): Promise<Testbed> {
  const flashed = image?.plan.files.map((f) => f.data).find((data) => appDescriptorOfImage(data)?.version === image.version);
  const boards: TestbedBoard[] = [];
  for (const b of rig.boards) {
    // Boards driven as physical ones (real, or virtual behind their RFC 2217 port) get --flash's image.
    const drivenAsPhysical = b.kind !== 'virtual' || b.drive === 'rfc2217';
    let firmware: BoardFirmware;
    if (flashed && drivenAsPhysical) firmware = fromImage(flashed, b.build, 'flashed by the bench (--flash)');
    // A virtual board's factory image is its variant's build (role, build kind: they are in the firmware).
    else if (b.kind === 'virtual') firmware = fromImage(await firmwareImage(b.firmwareVersion, { chip: CHIPS[b.chip], variant: variantOf(b) }), b.build, 'factory image');
    else firmware = { version: 'unknown', build: b.build, source: 'not read (no scenario ran on it)' };
    boards.push({ id: b.id, role: b.role, kind: b.kind, chip: CHIPS[b.chip].displayName, where: where(b), uuid: b.uuid || 'read from the board', firmware });
  }
  return {
    rigName: rig.name,
    rigFile: rig.file?.path ?? '(built in code)',
    ...(rig.file ? { rigSha256: rig.file.sha256 } : {}),
    commit: projectCommit(),
    node: `${process.version} (${process.platform} ${process.arch})`,
    software: [
      { name: "Moddable SDK (the firmware's build, also the virtual boards' for Linux)", version: moddableSdk() },
      { name: 'esptool-js', version: packageVersion('esptool-js') },
      { name: 'node-serialport', version: packageVersion('serialport') },
    ],
    boards,
  };
}

/** A physical board's identity and firmware as it answered at its first scenario (no --flash). */
export function boardRead(testbed: Testbed, spec: BoardSpec): void {
  const board = testbed.boards.find((b) => b.id === spec.id);
  if (!board || spec.kind === 'virtual') return;
  if (spec.uuid) board.uuid = spec.uuid;
  if (board.firmware.source === 'not read (no scenario ran on it)' && spec.firmwareVersion) board.firmware = { version: spec.firmwareVersion, build: spec.build, source: 'read from the board' };
}
