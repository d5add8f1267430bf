// A request or response body as the core reads it (hal/network.ts BodyReader): what every reader of
// bodies shares, outside http/ so that the stores (backup/local-store.ts) need nothing of the API's.
import type { BodyReader } from '../hal/network.ts';

/** Reads and discards the rest of a body. */
export async function drain(body: BodyReader): Promise<void> {
  while ((await body.read()) !== null) {
    /* discard */
  }
}
