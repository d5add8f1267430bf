// A free TCP port on 127.0.0.1, for servers that must be told their port (mosquitto, PostgreSQL).
import { createServer, type AddressInfo } from 'node:net';

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
