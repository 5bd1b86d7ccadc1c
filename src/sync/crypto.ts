// End-to-end encryption of synced documents (docs/sync.md, "Encryption"): a key from the
// passphrase by PBKDF2-SHA-256 with the database's salt; bodies sealed with AES-GCM (a fresh
// 96-bit IV each); document ids replaced by an HMAC of the logical id, so the server sees
// neither paths nor content. WebCrypto only.

export const KDF_ITERATIONS = 600_000;
const CHECK_TEXT = 'structured-memory sync passphrase check';

export interface EncryptionMeta {
  kdf: 'PBKDF2-SHA-256';
  iterations: number;
  /** base64 */
  salt: string;
  /** CHECK_TEXT sealed with the key: a wrong passphrase fails to open it. */
  check: string;
}

export interface SyncKey {
  seal(plain: unknown): Promise<string>;
  /** Throws when the text was not sealed with this key (or was altered). */
  open(sealed: string): Promise<unknown>;
  /** The server's id for a logical id. */
  docId(logical: string): Promise<string>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

const hex = (b: ArrayBuffer) =>
  [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');

/** Derives the AES-GCM and HMAC keys from the passphrase and the database's salt. */
export async function deriveKey(
  passphrase: string,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
): Promise<SyncKey> {
  const base = await crypto.subtle.importKey('raw', enc.encode(passphrase), 'PBKDF2', false, [
    'deriveBits',
  ]);
  const bits = new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: 'PBKDF2', hash: 'SHA-256', salt, iterations },
      base,
      512,
    ),
  );
  const aes = await crypto.subtle.importKey('raw', bits.slice(0, 32), 'AES-GCM', false, [
    'encrypt',
    'decrypt',
  ]);
  const mac = await crypto.subtle.importKey(
    'raw',
    bits.slice(32),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return {
    async seal(plain) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const data = enc.encode(JSON.stringify(plain));
      const sealed = new Uint8Array(
        await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, aes, data),
      );
      const out = new Uint8Array(12 + sealed.length);
      out.set(iv);
      out.set(sealed, 12);
      return toBase64(out);
    },
    async open(sealed) {
      const bytes = fromBase64(sealed);
      const plain = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: bytes.subarray(0, 12) },
        aes,
        bytes.subarray(12),
      );
      return JSON.parse(dec.decode(plain)) as unknown;
    },
    async docId(logical) {
      return `x${hex(await crypto.subtle.sign('HMAC', mac, enc.encode(logical)))}`;
    },
  };
}

/** A new database's encryption record and its key. */
export async function newEncryption(
  passphrase: string,
  iterations = KDF_ITERATIONS,
): Promise<{ meta: EncryptionMeta; key: SyncKey }> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const key = await deriveKey(passphrase, salt, iterations);
  const meta: EncryptionMeta = {
    kdf: 'PBKDF2-SHA-256',
    iterations,
    salt: toBase64(salt),
    check: await key.seal(CHECK_TEXT),
  };
  return { meta, key };
}

/** The key for an existing database, or null when the passphrase is not the one it was made with. */
export async function openEncryption(
  passphrase: string,
  meta: EncryptionMeta,
): Promise<SyncKey | null> {
  const key = await deriveKey(passphrase, fromBase64(meta.salt), meta.iterations);
  try {
    return (await key.open(meta.check)) === CHECK_TEXT ? key : null;
  } catch {
    return null;
  }
}

export function isEncryptionMeta(v: unknown): v is EncryptionMeta {
  const m = v as Partial<EncryptionMeta> | null;
  return (
    !!m &&
    m.kdf === 'PBKDF2-SHA-256' &&
    typeof m.iterations === 'number' &&
    Number.isSafeInteger(m.iterations) &&
    m.iterations >= 1000 &&
    m.iterations <= 10_000_000 &&
    typeof m.salt === 'string' &&
    typeof m.check === 'string'
  );
}
