// ETags of backups: lowercase SHA-256 hex of the plaintext. On the wire an RFC 7232 quoted string;
// requests may send it quoted or bare (DESIGN.md section 3).
import { ApiError } from '../errors.ts';

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

export function formatEtag(hex: string): string {
  return `"${hex}"`;
}

/** A single ETag value; a malformed one is a 400 naming the header. */
export function parseEtag(value: string | string[], header: string): string {
  if (Array.isArray(value)) throw new ApiError('invalid_header', { header }, `The ${header} header must appear once`);
  let v = value.trim();
  if (v.startsWith('W/')) v = v.slice(2);
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  if (!SHA256_HEX.test(v)) {
    throw new ApiError('invalid_header', { header }, `The ${header} header must be a SHA-256 hex digest, quoted or bare`);
  }
  return v.toLowerCase();
}

/** `*`, or one or more ETags separated by commas. */
export function parseIfNoneMatch(value: string | string[], header: string): '*' | string[] {
  const joined = Array.isArray(value) ? value.join(',') : value;
  if (joined.trim() === '*') return '*';
  const parts = joined.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0 || parts.length > 16) {
    throw new ApiError('invalid_header', { header }, `The ${header} header must list 1 to 16 ETags`);
  }
  return parts.map((p) => parseEtag(p, header));
}
