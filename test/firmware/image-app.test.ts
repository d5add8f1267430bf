// ESP-IDF app images: ours (a virtual board's, the firmware the Moddable SDK built for the host,
// deflated, in the DROM segment after the esp_app_desc_t) checked against esptool-js's own image reader, and native images laid out as
// elf2image lays out ESP-IDF builds (mapped DROM/IROM on their 64 KB page offsets, a padding
// segment between). Plus otadata's select entries.
//
// esptool-js 0.7.0's image module is no reference for the appended digest: its reader and writer
// take the checksum byte's offset as the image end, so they hash one byte short and its writer
// overwrites the checksum with the digest. The bootloader's esp_image_format.c (process_checksum,
// process_appended_hash_and_sig) is what ours follows; it was also checked by hand against
// ESP-IDF-built images from esptool's test suite (docs/flash-and-boot.md).
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ESP32S3ROM } from 'esptool-js/lib/targets/esp32s3.js';
import { loadFirmwareImage } from 'esptool-js/lib/image/index.js';
import { encodeAppDescriptor, appDescriptorOfImage } from '../../firmware/image/app-desc.ts';
import { buildAppImage, verifyAppImageBytes } from '../../firmware/image/app-image.ts';
import { CHIPS } from '../../firmware/image/chips.ts';
import { describeImage } from '../../firmware/image/describe.ts';
import { activeOtadata, decodeOtaSelectEntry, encodeOtaSelectEntry, nextSeqFor, OTA_IMG_STATE } from '../../firmware/image/otadata.ts';
import { buildVirtualAppImage, virtualFirmwareOf } from '../../firmware/image/virtual-payload.ts';

const S3 = CHIPS.esp32s3;
/** A stand-in for an mc.so: the image takes any bytes (the virtual chip's loader is what needs an ELF). */
const FIRMWARE = new TextEncoder().encode('\x7fELF a stand-in for the firmware (ünïcode) '.repeat(40));
const image = buildVirtualAppImage({ chip: S3, version: '2026.03.01', firmware: FIRMWARE });

// esptool-js's reader warns about segment addresses that would be unusual on a classic ESP32.
beforeAll(() => void vi.spyOn(console, 'warn').mockImplementation(() => undefined));

describe('a virtual board app image', () => {
  it('is a valid ESP32-S3 image with its version in esp_app_desc_t and the firmware after it', () => {
    const check = verifyAppImageBytes(image, { expectedChipId: 9 });
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
    expect(check.length).toBe(image.length);
    expect(image[0]).toBe(0xe9);
    expect(check.segments.map((s) => [s.loadAddress, s.region, s.mapped, s.dataOffset])).toEqual([
      [0x3c000020, 'DROM', true, 0x20],
      [0x40374000, 'IRAM', false, expect.any(Number)],
    ]);
    expect(check.appDescriptor).toMatchObject({ version: '2026.03.01', projectName: 'esp32-fleet', date: 'Mar  1 2026', idfVersion: 'moddable-sdk-lin', elfSha256: createHash('sha256').update(FIRMWARE).digest('hex') });
    expect(appDescriptorOfImage(image)?.version).toBe('2026.03.01');
    const first = check.segments[0]!;
    const segment = image.subarray(first.dataOffset, first.dataOffset + first.length);
    expect(Buffer.from(virtualFirmwareOf(segment)!).equals(Buffer.from(FIRMWARE))).toBe(true);
    // Deflated, and framed after the descriptor: "MCSO", format 2, the payload's and the firmware's lengths.
    expect(first.length).toBeLessThan(FIRMWARE.length);
    expect(Buffer.from(segment.subarray(256, 260)).toString('latin1')).toBe('MCSO');
    expect(Buffer.from(segment).readUInt32LE(268)).toBe(FIRMWARE.length);
    // The appended SHA-256 covers everything before it.
    expect(Buffer.from(image.subarray(-32)).toString('hex')).toBe(createHash('sha256').update(image.subarray(0, -32)).digest('hex'));
  });

  it("agrees with esptool-js's image reader on segments, chip id and checksum", async () => {
    const theirs: any = await loadFirmwareImage(new ESP32S3ROM(), image);
    expect(theirs.segments.map((s: any) => [s.addr, s.data.length])).toEqual(verifyAppImageBytes(image).segments.map((s) => [s.loadAddress, s.length]));
    expect(theirs.checksum).toBe(theirs.calculateChecksum());
    expect(theirs.chipId).toBe(9);
    expect(theirs.appendDigest).toBe(true);
  });

  it('is refused when a byte of the firmware is flipped: checksum and appended hash both fail', async () => {
    const corrupt = image.slice();
    corrupt[0x20 + 256 + 16 + 5] = corrupt[0x20 + 256 + 16 + 5]! ^ 0x20;
    const check = verifyAppImageBytes(corrupt);
    expect(check.ok).toBe(false);
    expect(check.problems.map((p) => p.message)).toEqual([expect.stringMatching(/^Checksum failed\. Calculated 0x[0-9a-f]+ read 0x[0-9a-f]+$/), 'Image hash failed - image is corrupt']);
    const theirs: any = await loadFirmwareImage(new ESP32S3ROM(), corrupt);
    expect(theirs.checksum).not.toBe(theirs.calculateChecksum());
  });

  it('is refused by a chip it was not built for, and when truncated', () => {
    const c3 = buildVirtualAppImage({ chip: CHIPS.esp32c3, version: '2026.03.01', firmware: FIRMWARE });
    expect(verifyAppImageBytes(c3, { expectedChipId: 9 }).problems).toEqual([{ tag: 'boot_comm', message: 'mismatch chip ID, expected 9, found 5' }]);
    expect(verifyAppImageBytes(image.subarray(0, 200)).problems[0]!.message).toMatch(/^image truncated in segment 0/);
    expect(verifyAppImageBytes(new Uint8Array(64).fill(0xff), { address: 0x310000 }).problems[0]!.message).toBe('image at 0x310000 has invalid magic byte (nothing flashed here?)');
    expect(verifyAppImageBytes(image, { partitionSize: 0x100 }).problems[0]!.message).toMatch(/doesn't fit in partition length 256/);
  });

  it('refuses versions outside YYYY.MM.bb and names that do not fit esp_app_desc_t', () => {
    expect(() => buildVirtualAppImage({ chip: S3, version: '1.2.3', firmware: new Uint8Array(0) })).toThrow(/YYYY\.MM\.bb/);
    expect(() => buildVirtualAppImage({ chip: S3, version: '2026.03.01', firmware: new Uint8Array(0), projectName: 'x'.repeat(32) })).toThrow(/project name is 32 characters/);
  });
});

describe('a native image laid out as ESP-IDF builds are', () => {
  it('puts IROM on its page offset with a padding segment, and is read with its app descriptor and no virtual board firmware', () => {
    const desc = encodeAppDescriptor({ secureVersion: 0, version: 'v5.4.1-app', projectName: 'hello_world', time: '10:11:12', date: 'Feb  2 2026', idfVersion: 'v5.4.1', elfSha256: 'ab'.repeat(32), minEfuseBlockRevision: 0, maxEfuseBlockRevision: 199, mmuPageSizeLog2: 16 });
    const rodata = new Uint8Array(desc.length + 4000).fill(0x11);
    rodata.set(desc);
    const native = buildAppImage({
      chip: S3,
      entry: 0x40375000,
      segments: [
        { loadAddress: 0x3c020020, data: rodata },
        { loadAddress: 0x3fc90000, data: new Uint8Array(9000).fill(0x33) },
        { loadAddress: 0x40374000, data: new Uint8Array(3000).fill(0x44) },
        { loadAddress: 0x42000020, data: new Uint8Array(70_000).fill(0x22) },
      ],
    });
    const check = verifyAppImageBytes(native, { expectedChipId: 9, address: 0x10000 });
    expect(check.problems).toEqual([]);
    expect(check.segments.map((s) => s.region)).toEqual(['DROM', 'DRAM', 'IRAM', 'PADDING', 'IROM']);
    expect(check.segments[4]!.dataOffset % 0x10000).toBe(0x20);
    expect(describeImage(native)).toMatchObject({ valid: true, chip: 'ESP32-S3', flash: { mode: 'dio', freq: '80m', size: '8MB' }, app: { version: 'v5.4.1-app', projectName: 'hello_world' }, virtualFirmwareBytes: null });
    const rodataSegment = native.subarray(check.segments[0]!.dataOffset, check.segments[0]!.dataOffset + check.segments[0]!.length);
    expect(virtualFirmwareOf(rodataSegment)).toBeNull();
  });

  it('reports a mapped segment whose file offset is not on its page offset', () => {
    const bad = buildAppImage({ chip: S3, entry: 0x40374000, segments: [{ loadAddress: 0x40374000, data: new Uint8Array(16) }] });
    // Re-point the only segment into IROM: now it would be mapped at the wrong page offset.
    bad.set([0x00, 0x10, 0x00, 0x42], 24);
    expect(verifyAppImageBytes(bad, { address: 0x10000 }).problems[0]!.message).toBe('Segment 0 load address 0x42001000, doesn\'t match data 0x00010020');
  });
});

describe('otadata select entries', () => {
  it('carry the ROM CRC-32 of the sequence number, as on a board (seq 1: 9a 98 43 47)', () => {
    expect([...encodeOtaSelectEntry({ seq: 1, state: OTA_IMG_STATE.valid }).subarray(28)]).toEqual([0x9a, 0x98, 0x43, 0x47]);
  });

  it('select the valid entry with the highest sequence; ABORTED and INVALID entries and bad CRCs do not count', () => {
    const e = (seq: number, state: number) => decodeOtaSelectEntry(encodeOtaSelectEntry({ seq, state }));
    const erased = decodeOtaSelectEntry(new Uint8Array(32).fill(0xff));
    expect(activeOtadata([e(1, OTA_IMG_STATE.valid), e(2, OTA_IMG_STATE.new)])).toBe(1);
    expect(activeOtadata([e(1, OTA_IMG_STATE.valid), e(2, OTA_IMG_STATE.aborted)])).toBe(0);
    expect(activeOtadata([erased, e(3, OTA_IMG_STATE.invalid)])).toBe(-1);
    const badCrc = e(5, OTA_IMG_STATE.valid);
    badCrc.crc ^= 1;
    expect(activeOtadata([e(4, OTA_IMG_STATE.valid), badCrc])).toBe(0);
  });

  it('advance the sequence so that (seq - 1) % slots is the chosen slot (esp_rewrite_ota_data)', () => {
    expect(nextSeqFor(0, 2, null)).toBe(1);
    expect(nextSeqFor(1, 2, 1)).toBe(2);
    expect(nextSeqFor(0, 2, 2)).toBe(3);
    expect(nextSeqFor(1, 2, 3)).toBe(4);
    expect(nextSeqFor(1, 2, 2)).toBe(2);
  });
});
