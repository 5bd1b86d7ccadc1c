// Errors that cross the worker boundary keep their `code`. Comlink sends a thrown Error as its
// name, message and stack only; the page branches on `code` (docs/design.md, "Errors"), so both
// sides install this handler: it sends `code` too, and Comlink's own deserializer puts it back.
import { transferHandlers, type TransferHandler } from 'comlink';

interface Thrown {
  value: unknown;
}
interface Serialized {
  isError: boolean;
  value: unknown;
}

/** `code` of an error, when it has a string one. */
function codeOf(value: unknown): string | undefined {
  if (!(value instanceof Error)) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Makes errors thrown across Comlink keep a string `code`, on whichever side calls it (the worker
 * and the page both do). Calling it again changes nothing.
 */
export function keepErrorCodes(): void {
  const base = transferHandlers.get('throw') as TransferHandler<Thrown, Serialized> | undefined;
  if (!base || (base as { keepsCodes?: boolean }).keepsCodes) return;
  const handler: TransferHandler<Thrown, Serialized> & { keepsCodes: true } = {
    keepsCodes: true,
    canHandle: (value): value is Thrown => base.canHandle(value),
    serialize(thrown) {
      const [serialized, transfers] = base.serialize(thrown);
      const code = codeOf(thrown.value);
      if (serialized.isError && code !== undefined)
        return [{ ...serialized, value: { ...(serialized.value as object), code } }, transfers];
      return [serialized, transfers];
    },
    deserialize: (serialized) => base.deserialize(serialized),
  };
  transferHandlers.set('throw', handler);
}
