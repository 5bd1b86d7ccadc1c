// KoboldAI Lite saves (.json), pure (docs/import-export.md). Not read yet: none is recognised.
import type { ParsedFile } from './types';

export function isKoboldSave(_data: Record<string, unknown>): boolean {
  return false;
}

export function parseKoboldSave(
  _data: Record<string, unknown>,
  name: string,
  _now: Date,
): ParsedFile {
  return { ok: false, message: `${name}: KoboldAI Lite saves cannot be imported yet.` };
}
