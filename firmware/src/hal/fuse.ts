// The eFuse key (block 3, purpose HMAC_UP). The firmware never reads it: it can only ask the HMAC
// peripheral for HMAC-SHA256(key, message) (DESIGN.md section 2).

export interface Fuse {
  hmac(message: Uint8Array): Uint8Array;
}
