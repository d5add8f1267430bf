// Shared by the firmware bench and its probes.
/** A JSON backup of exactly `bytes` bytes, shaped like a controller configuration export. */
export function backupOfSize(bytes: number): string {
  const outputs: string[] = [];
  let size = '{"outputs":[],"pad":""}'.length;
  for (let i = 0; size + 40 < bytes; i++) {
    const item = `{"id":${i},"name":"Light ${String(i).padStart(5, '0')}","level":${i % 100}}`;
    outputs.push(item);
    size += item.length + (outputs.length > 1 ? 1 : 0);
  }
  const head = `{"outputs":[${outputs.join(',')}],"pad":"`;
  return head + ' '.repeat(bytes - head.length - 2) + '"}';
}

