// The CSV form of a partition table (ESP-IDF api-guides/partition-tables, "Creating Custom
// Tables"): `# comments`, then `Name, Type, SubType, Offset, Size, Flags` per line. Type and
// subtype by name or number; offset and size in decimal, hex (0x…) or with a K or M suffix; an empty
// offset follows the partition before it, aligned for its type; flags `encrypted` and `readonly`,
// separated by `:`. The product's one table is firmware/partitions.csv (DESIGN.md section 7).
import { ALIGNMENT, FLAG_ENCRYPTED, FLAG_READONLY, PARTITION_SUBTYPES, PARTITION_TABLE_OFFSET, PARTITION_TYPES, PartitionTableError, type PartitionEntry } from './partition-table.ts';

function number(text: string, where: string): number {
  const m = /^(0x[0-9a-f]+|\d+)([km]?)$/i.exec(text.trim());
  if (!m) throw new PartitionTableError(`${where}: not a size or offset: ${JSON.stringify(text)}`);
  const scale = m[2]!.toLowerCase() === 'k' ? 1024 : m[2]!.toLowerCase() === 'm' ? 1024 * 1024 : 1;
  return Number(m[1]) * scale;
}

function typeOf(text: string, where: string): number {
  const known = (PARTITION_TYPES as Record<string, number>)[text];
  if (known !== undefined) return known;
  const n = number(text, where);
  if (n > 0xfe) throw new PartitionTableError(`${where}: type ${text} is out of range`);
  return n;
}

function subtypeOf(type: number, text: string, where: string): number {
  const known = PARTITION_SUBTYPES[type]?.[text];
  if (known !== undefined) return known;
  if (!/^(0x[0-9a-f]+|\d+)$/i.test(text)) throw new PartitionTableError(`${where}: unknown subtype ${JSON.stringify(text)} for type ${type}`);
  const n = Number(text);
  if (n > 0xfe) throw new PartitionTableError(`${where}: subtype ${text} is out of range`);
  return n;
}

export function parsePartitionCsv(text: string, source = 'partitions.csv'): PartitionEntry[] {
  const entries: PartitionEntry[] = [];
  let next = PARTITION_TABLE_OFFSET + 0x1000;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    const where = `${source}:${i + 1}`;
    const fields = line.split(',').map((f) => f.trim());
    if (fields.length < 5) throw new PartitionTableError(`${where}: expected Name, Type, SubType, Offset, Size[, Flags]`);
    const [name, typeText, subtypeText, offsetText, sizeText, flagsText = ''] = fields as [string, string, string, string, string, string?];
    const type = typeOf(typeText, where);
    const align = ALIGNMENT[type] ?? 0x1000;
    const offset = offsetText === '' ? Math.ceil(next / align) * align : number(offsetText, where);
    const size = number(sizeText, where);
    let flags = 0;
    for (const flag of flagsText.split(':').map((f) => f.trim()).filter(Boolean)) {
      if (flag === 'encrypted') flags |= FLAG_ENCRYPTED;
      else if (flag === 'readonly') flags |= FLAG_READONLY;
      else throw new PartitionTableError(`${where}: unknown flag ${JSON.stringify(flag)}`);
    }
    entries.push({ name, type, subtype: subtypeOf(type, subtypeText, where), offset, size, flags });
    next = offset + size;
  });
  return entries;
}
