// A virtual board's NVS: ESP-IDF's key-value store in the partition table's `nvs` partition, beneath
// the SDK's `preference` module (files/preference/preference.js; its natives on the chip are
// esp32/modPreference.c over nvs_*). Kept in that partition of the flash image, so erasing the flash
// (esptool erase_flash) erases it too, as on a chip; its layout here is our own: a u32 length and a
// JSON object of namespaces, rewritten whole (sector erase, then program) on each change. What the
// chip refuses is refused alike: a namespace or key over 15 characters (NVS_KEY_NAME_MAX_SIZE - 1),
// a value that is no boolean, 32-bit integer, string or blob.
import { u32 } from '../image/bytes.ts';
import { findPartition, PARTITION_SUBTYPES, PARTITION_TYPES, type PartitionEntry } from '../image/partition-table.ts';
import { FLASH_SECTOR_BYTES, type FlashImage } from './flash-image.ts';

export type NvsValue = boolean | number | string | Uint8Array;
type Stored = { b: boolean } | { i: number } | { s: string } | { x: string };

/** NVS_KEY_NAME_MAX_SIZE is 16 with the NUL. */
const NAME_MAX = 15;

export class Nvs {
  private readonly partition: PartitionEntry;

  constructor(
    private readonly flash: FlashImage,
    table: PartitionEntry[],
  ) {
    const nvs = findPartition(table, PARTITION_TYPES.data, PARTITION_SUBTYPES[PARTITION_TYPES.data]!.nvs!);
    if (!nvs) throw new Error('the partition table has no nvs partition');
    this.partition = nvs;
  }

  private load(): Record<string, Record<string, Stored>> {
    const head = this.flash.read(this.partition.offset, 4);
    const length = u32(head, 0);
    if (length === 0xffffffff || length === 0 || length > this.partition.size - 4) return {};
    try {
      return JSON.parse(Buffer.from(this.flash.read(this.partition.offset + 4, length)).toString('utf8')) as Record<string, Record<string, Stored>>;
    } catch {
      return {}; // what nvs_flash_init does with pages it cannot read: starts over
    }
  }

  private save(all: Record<string, Record<string, Stored>>): void {
    const body = Buffer.from(JSON.stringify(all), 'utf8');
    if (body.length + 4 > this.partition.size) throw new Error('ESP_ERR_NVS_NOT_ENOUGH_SPACE');
    const data = Buffer.alloc(body.length + 4);
    data.writeUInt32LE(body.length, 0);
    body.copy(data, 4);
    const sectors = Math.ceil(data.length / FLASH_SECTOR_BYTES) * FLASH_SECTOR_BYTES;
    this.flash.erase(this.partition.offset, Math.min(this.partition.size, Math.max(sectors, FLASH_SECTOR_BYTES)));
    this.flash.program(this.partition.offset, data);
  }

  private static name(what: string, name: string, failure: string): void {
    if (name.length === 0 || name.length > NAME_MAX) throw new Error(`${failure} (${what} ${JSON.stringify(name)}: 1 to ${NAME_MAX} characters)`);
  }

  get(domain: string, key: string): NvsValue | undefined {
    const v = this.load()[domain]?.[key];
    if (!v) return undefined;
    if ('b' in v) return v.b;
    if ('i' in v) return v.i;
    if ('s' in v) return v.s;
    return new Uint8Array(Buffer.from(v.x, 'base64'));
  }

  set(domain: string, key: string, value: NvsValue): void {
    Nvs.name('namespace', domain, 'nvs_open fail');
    Nvs.name('key', key, 'nvs set fail');
    let stored: Stored;
    if (typeof value === 'boolean') stored = { b: value };
    else if (typeof value === 'number') {
      if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) throw new Error('float unsupported');
      stored = { i: value };
    } else if (typeof value === 'string') stored = { s: value };
    else stored = { x: Buffer.from(value).toString('base64') };
    const all = this.load();
    all[domain] = { ...(all[domain] ?? {}), [key]: stored };
    this.save(all);
  }

  delete(domain: string, key: string): void {
    const all = this.load();
    if (!all[domain]?.[key]) return;
    delete all[domain]![key];
    if (Object.keys(all[domain]!).length === 0) delete all[domain];
    this.save(all);
  }

  keys(domain: string): string[] {
    return Object.keys(this.load()[domain] ?? {});
  }
}
