// The health check a board passes before a scenario gets it, and again before a quarantined board is
// handed out once more: over its RFC 2217 port, the ROM answers a sync, names the chip and its eFuse
// MAC and reads the flash ID; then the app boots and its console answers `status`, as the board the
// place says it is (role, build; the MAC when the place names one). SerialBoard.identify does the
// talking; this adds what the place promises.
import type { BoardSpec } from '../rig.ts';
import { SerialBoard, type BoardIdentity } from '../serial-board.ts';
import { describeError } from '../bench.ts';

export class BoardHealthError extends Error {
  override name = 'BoardHealthError';
}

/** A board reached as a physical one at `url` (rfc2217://host:port), from a spec the place's tags give. */
export function farmBoardSpec(id: string, url: string, tags: Record<string, string>): BoardSpec {
  const role = tags.role === 'client' ? 'client' : 'controller';
  return {
    id,
    role,
    kind: 'rfc2217',
    port: url,
    uuid: '',
    wifiMac: '',
    position: { x: 0, y: 0 },
    hardwareClass: role === 'controller' ? 'ctl-s3' : 'lamp-c3',
    productHex: '0x00c0ffee',
    firmwareVersion: '',
    build: tags.build === 'debug' ? 'debug' : 'production',
    adminPassword: 'bench-admin-password',
    chip: (tags.chip ?? 'esp32s3') as BoardSpec['chip'],
    flashSizeBytes: 8 * 1024 * 1024,
    resetMethod: 'classic',
    baudRate: 115200,
  };
}

/** Runs the check; a failure is a BoardHealthError whose message says what did not answer. */
export async function checkHealth(spec: BoardSpec, expectedMac?: string, timeoutMs = 60_000): Promise<BoardIdentity> {
  const board = new SerialBoard(structuredClone(spec));
  let timer: NodeJS.Timeout | undefined;
  try {
    const timedOut = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no verdict within ${timeoutMs / 1000} s`)), timeoutMs)));
    const id = await Promise.race([board.identify(), timedOut]);
    const st = id.status;
    if (st.role !== spec.role) throw new Error(`its firmware is a ${st.role}, the place says ${spec.role}`);
    if (st.build !== spec.build) throw new Error(`its firmware is a ${st.build} build, the place says ${spec.build}`);
    if (expectedMac && id.mac.toUpperCase() !== expectedMac.toUpperCase()) throw new Error(`its eFuse MAC is ${id.mac}, the place says ${expectedMac}`);
    return id;
  } catch (err) {
    throw new BoardHealthError(`health check of ${spec.id} on ${spec.port} failed: ${describeError(err)}`);
  } finally {
    clearTimeout(timer);
    await board.stop().catch(() => undefined);
  }
}
