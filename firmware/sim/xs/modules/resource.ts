// `Resource` (documentation/base/base.md "Resource"): a read-only buffer in flash, named as in the
// manifest's "resources". The host reads the platform's resource files; `exists` answers whether
// one is there. On a board it is a HostBuffer read in place; here it is an ArrayBuffer.
import { arrayBufferOf, hostCall } from '../host.ts';

function Resource(this: unknown, name: string): ArrayBuffer {
  if (!new.target) throw new TypeError('Resource: use new');
  return arrayBufferOf(hostCall('resource.read', { name }).payload);
}
(Resource as unknown as { exists: (name: string) => boolean }).exists = (name: string) => hostCall('resource.exists', { name }).value as boolean;

export default Resource;
