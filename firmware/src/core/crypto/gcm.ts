// Streaming AES-256-GCM (NIST SP 800-38D) for the pure-JS crypto HAL. @noble/ciphers' `gcm` is
// one-shot: it needs the whole message in memory, and a 512 KB backup never is (DESIGN.md
// section 2). So GCM is assembled here from two public @noble/ciphers v2 pieces:
// - `ecb(key, {disablePadding: true})`: the raw AES block function, used to encrypt batches of
//   GCM counter blocks into keystream (ECB instances are single-use, hence one per batch);
// - `ghash.create(H)`: incremental GHASH. Its `update` zero-pads every call to 16 bytes, so input
//   is fed in whole blocks and at most 15 bytes wait for the next chunk.
import { ecb } from '@noble/ciphers/aes.js';
import { ghash } from '@noble/ciphers/_polyval.js';
import type { GcmDecryptStream, GcmStream } from '../../hal/crypto.ts';
import { constantTimeEqual } from '../bytes.ts';

const BLOCK_BYTES = 16;
const KEY_BYTES = 32;
/** Only 96-bit IVs: J0 = IV || 0^31 || 1 (SP 800-38D section 7.1 step 2); FFCE uses 12 bytes. */
const IV_BYTES = 12;
export const GCM_TAG_BYTES = 16;
/**
 * Counter blocks per AES call: bounds scratch memory to 2 x 256 bytes whatever the chunk size,
 * while amortising the AES key expansion that each (single-use) ECB instance repeats.
 */
const KEYSTREAM_BLOCKS = 16;

/** GCM's inc32: add one to the last 32 bits of the block, big-endian, wrapping mod 2^32. */
function increment32(block: Uint8Array): void {
  for (let i = BLOCK_BYTES - 1; i >= BLOCK_BYTES - 4; i--) {
    block[i] = (block[i]! + 1) & 0xff;
    if (block[i] !== 0) return;
  }
}

function encryptBlocks(key: Uint8Array, blocks: Uint8Array): Uint8Array {
  return ecb(key, { disablePadding: true }).encrypt(blocks);
}

/** Bit length as the 64-bit big-endian field of GHASH's final length block. */
function writeBitLength(view: DataView, offset: number, byteLength: number): void {
  const bits = byteLength * 8;
  view.setUint32(offset, Math.floor(bits / 0x1_0000_0000));
  view.setUint32(offset + 4, bits >>> 0);
}

/** The state both directions share: keystream, GHASH over the ciphertext, and the lengths. */
function createGcmState(key: Uint8Array, iv: Uint8Array, aad: Uint8Array) {
  if (key.length !== KEY_BYTES) throw new Error(`AES-256-GCM key must be ${KEY_BYTES} bytes, got ${key.length}`);
  if (iv.length !== IV_BYTES) throw new Error(`GCM IV must be ${IV_BYTES} bytes, got ${iv.length}`);
  // Copies: a caller that reuses or wipes its buffers mid-stream must not change this message.
  const aesKey = key.slice();
  const aadLength = aad.length;
  const counter = new Uint8Array(BLOCK_BYTES);
  counter.set(iv);
  counter[BLOCK_BYTES - 1] = 1;
  // One AES call gives H = E(K, 0^128) and E(K, J0), which masks the final GHASH into the tag.
  const setup = new Uint8Array(2 * BLOCK_BYTES);
  setup.set(counter, BLOCK_BYTES);
  const encryptedSetup = encryptBlocks(aesKey, setup);
  const tagMask = encryptedSetup.slice(BLOCK_BYTES);
  // No length hint: noble then builds its smallest multiplication table (window 2). Hinting the
  // message size would pick window 8 above 64 KB: thousands of table entries, too big for the heap.
  const mac = ghash.create(encryptedSetup.subarray(0, BLOCK_BYTES));
  mac.update(aad);
  increment32(counter); // the first data block uses inc32(J0)

  const counterBlocks = new Uint8Array(KEYSTREAM_BLOCKS * BLOCK_BYTES);
  let keystream: Uint8Array = new Uint8Array(0);
  let keystreamOffset = 0;
  const pending = new Uint8Array(BLOCK_BYTES); // ciphertext not yet given to GHASH
  let pendingLength = 0;
  let textLength = 0;
  let finished = false;

  function refillKeystream(bytesWanted: number): void {
    const blocks = Math.min(KEYSTREAM_BLOCKS, Math.ceil(bytesWanted / BLOCK_BYTES));
    for (let b = 0; b < blocks; b++) {
      counterBlocks.set(counter, b * BLOCK_BYTES);
      increment32(counter);
    }
    keystream = encryptBlocks(aesKey, counterBlocks.subarray(0, blocks * BLOCK_BYTES));
    keystreamOffset = 0;
  }

  function assertOpen(): void {
    if (finished) throw new Error('GCM stream already finished');
  }

  return {
    /** CTR: input XOR keystream; a partial keystream block carries over to the next chunk. */
    applyKeystream(input: Uint8Array): Uint8Array {
      assertOpen();
      const out = new Uint8Array(input.length);
      for (let i = 0; i < input.length; i++) {
        if (keystreamOffset === keystream.length) refillKeystream(input.length - i);
        out[i] = input[i]! ^ keystream[keystreamOffset++]!;
      }
      return out;
    },

    absorbCiphertext(ciphertext: Uint8Array): void {
      assertOpen();
      textLength += ciphertext.length;
      let offset = 0;
      if (pendingLength > 0) {
        offset = Math.min(BLOCK_BYTES - pendingLength, ciphertext.length);
        pending.set(ciphertext.subarray(0, offset), pendingLength);
        pendingLength += offset;
        if (pendingLength < BLOCK_BYTES) return;
        mac.update(pending);
        pendingLength = 0;
      }
      const wholeEnd = offset + Math.floor((ciphertext.length - offset) / BLOCK_BYTES) * BLOCK_BYTES;
      if (wholeEnd > offset) mac.update(ciphertext.subarray(offset, wholeEnd));
      pending.set(ciphertext.subarray(wholeEnd));
      pendingLength = ciphertext.length - wholeEnd;
    },

    /** The tag: GHASH(A, C) finished with the length block (section 7.1 steps 5-6), masked. */
    tag(): Uint8Array {
      assertOpen();
      finished = true;
      if (pendingLength > 0) mac.update(pending.subarray(0, pendingLength)); // noble zero-pads it
      const lengths = new Uint8Array(BLOCK_BYTES);
      const view = new DataView(lengths.buffer);
      writeBitLength(view, 0, aadLength);
      writeBitLength(view, 8, textLength);
      const tag = mac.update(lengths).digest();
      for (let i = 0; i < GCM_TAG_BYTES; i++) tag[i] = tag[i]! ^ tagMask[i]!;
      return tag;
    },
  };
}

export function createGcmEncryptStream(key: Uint8Array, iv: Uint8Array, aad: Uint8Array): GcmStream {
  const state = createGcmState(key, iv, aad);
  return {
    update(plaintext) {
      const ciphertext = state.applyKeystream(plaintext);
      state.absorbCiphertext(ciphertext);
      return ciphertext;
    },
    finish: () => state.tag(),
  };
}

export function createGcmDecryptStream(key: Uint8Array, iv: Uint8Array, aad: Uint8Array): GcmDecryptStream {
  const state = createGcmState(key, iv, aad);
  return {
    update(ciphertext) {
      state.absorbCiphertext(ciphertext);
      return state.applyKeystream(ciphertext);
    },
    verify(tag) {
      // Constant time, so a forger learns nothing from how long a wrong tag takes to reject.
      if (!constantTimeEqual(state.tag(), tag)) throw new Error('GCM authentication failed');
    },
  };
}
