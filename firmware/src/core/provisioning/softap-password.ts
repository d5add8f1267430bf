// The SoftAP password (spec 2.5, 5.6): derived from the SoftAP's BSSID, by the controller that opens
// provisioning mode (mode.ts) and by the client or target that joins it, from the BSSID it scanned.
import { hexDecode } from '../bytes.ts';

const BSSID_BYTES = 6;

function bssidBytes(bssid: Uint8Array | string): Uint8Array {
  if (typeof bssid === 'string') {
    // Not a module-level RegExp: XS 8.2.3 corrupts memory running a preloaded one (docs/moddable-regexp.md).
    if (!/^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/i.test(bssid)) throw new Error(`BSSID must look like AA:BB:CC:DD:EE:FF, got "${bssid}"`);
    return hexDecode(bssid.replace(/[:-]/g, ''));
  }
  if (bssid.length !== BSSID_BYTES) throw new Error(`BSSID must be ${BSSID_BYTES} bytes, got ${bssid.length}`);
  return bssid;
}

/**
 * Spec 5.6: for i = 0..5, the upper nibble of BSSID[i] then the lower nibble of BSSID[5-i], as
 * 12 uppercase hex characters. Client and controller firmware must agree on it exactly.
 */
export function softApPassword(bssid: Uint8Array | string): string {
  const bytes = bssidBytes(bssid);
  let password = '';
  for (let i = 0; i < BSSID_BYTES; i++) {
    password += (bytes[i]! >> 4).toString(16) + (bytes[BSSID_BYTES - 1 - i]! & 0x0f).toString(16);
  }
  return password.toUpperCase();
}
