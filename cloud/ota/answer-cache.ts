// A map bounded in bytes that evicts the least recently used entries, for the OTA check's serialized
// answers. The byte figure is an estimate of what an entry keeps alive: its key, its body, and a fixed
// overhead for the Map entry and the objects around them (docs/cloud-limits.md).
//
// Recency is kept the CLOCK (second-chance) way: a hit only sets a flag, and eviction gives flagged
// entries one more round. Moving an entry to the back of the Map on every hit (delete + set) costs
// about 1.2 µs, a third of the OTA fast path's whole budget per request.

/** Per-entry overhead counted on top of key and body: Map slot, entry object, Buffer header. */
export const ENTRY_OVERHEAD_BYTES = 200;

interface Slot<V> {
  value: V;
  bytes: number;
  /** Used since it was last passed over by eviction. */
  recent: boolean;
}

export class ByteBudgetLru<V> {
  private readonly map = new Map<string, Slot<V>>();
  private usedBytes = 0;

  constructor(readonly budgetBytes: number) {}

  get size(): number {
    return this.map.size;
  }

  /** Bytes currently held (estimate); never above budgetBytes. */
  get bytes(): number {
    return this.usedBytes;
  }

  /** The value, marked as recently used. */
  get(key: string): V | undefined {
    const slot = this.map.get(key);
    if (!slot) return undefined;
    slot.recent = true;
    return slot.value;
  }

  /** Stores the value unless it alone exceeds the budget; evicts the least recently used entries. */
  set(key: string, value: V, payloadBytes: number): void {
    this.delete(key);
    const bytes = key.length + payloadBytes + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.budgetBytes) return;
    // Map keeps insertion order, so the first entry is the one longest without a second chance.
    while (this.usedBytes + bytes > this.budgetBytes) {
      const oldest = this.map.entries().next();
      if (oldest.done) break;
      const [oldKey, slot] = oldest.value;
      this.map.delete(oldKey);
      if (slot.recent) {
        slot.recent = false;
        this.map.set(oldKey, slot); // used since: to the back, once
      } else {
        this.usedBytes -= slot.bytes;
      }
    }
    this.map.set(key, { value, bytes, recent: false });
    this.usedBytes += bytes;
  }

  delete(key: string): void {
    const slot = this.map.get(key);
    if (!slot) return;
    this.map.delete(key);
    this.usedBytes -= slot.bytes;
  }

  clear(): void {
    this.map.clear();
    this.usedBytes = 0;
  }
}
