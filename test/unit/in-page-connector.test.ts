// The in-page connector's engine after close(): Settings saved or the model deleted while the
// model loads must not leave an engine running (with the model's memory) that nothing ends, and a
// load or request in progress must end with a sentence, not wait forever on an ended worker.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createInPageConnector } from '../../src/llm/in-page/connector';
import { LlmError } from '../../src/llm/types';

/** A worker that takes every message and answers none (an engine busy loading), counted. */
class SilentWorker {
  static started: SilentWorker[] = [];
  ended = false;
  sent = 0;
  constructor() {
    SilentWorker.started.push(this);
  }
  postMessage(): void {
    this.sent++;
  }
  addEventListener(): void {}
  removeEventListener(): void {}
  start(): void {}
  terminate(): void {
    this.ended = true;
  }
}

/** A promise and its resolve, to hold a step until the test lets it go. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const running = () => SilentWorker.started.filter((w) => !w.ended);

/** What `p` settled with, or 'pending' if it has not after the queued work has run. */
async function settled(p: Promise<unknown>): Promise<unknown> {
  const pending = Symbol('pending');
  const outcome = await Promise.race([
    p.then(
      () => 'resolved',
      (e: unknown) => e,
    ),
    new Promise((r) => setTimeout(() => r(pending), 20)),
  ]);
  return outcome === pending ? 'pending' : outcome;
}

describe('the in-page connector after close()', () => {
  beforeEach(() => {
    SilentWorker.started = [];
    vi.stubGlobal('Worker', SilentWorker);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('starts no engine when closed while the model file is still being read', async () => {
    const file = deferred<Blob[]>();
    const connector = createInPageConnector({ name: 'm.gguf', files: () => file.promise });
    const detecting = connector.detect();
    connector.close();
    file.resolve([new Blob([new Uint8Array(64)])]);
    const outcome = await settled(detecting);
    expect(outcome).toBeInstanceOf(LlmError);
    expect((outcome as LlmError).code).toBe('DISCONNECTED');
    expect((outcome as LlmError).message).toContain('send the message again');
    expect(SilentWorker.started).toHaveLength(0);
  });

  it('ends the engine and the waiting load when closed while the engine loads', async () => {
    const connector = createInPageConnector({
      name: 'm.gguf',
      files: async () => [new Blob([new Uint8Array(64)])],
    });
    const detecting = connector.detect();
    await vi.waitFor(() => expect(SilentWorker.started[0]?.sent ?? 0).toBeGreaterThan(0));
    expect(await settled(detecting)).toBe('pending');
    connector.close();
    const outcome = await settled(detecting);
    expect(outcome).toBeInstanceOf(LlmError);
    expect((outcome as LlmError).code).toBe('DISCONNECTED');
    expect(running()).toHaveLength(0);
  });

  it('answers a request after close() with the sentence, and starts nothing', async () => {
    const connector = createInPageConnector({
      name: 'm.gguf',
      files: async () => [new Blob([new Uint8Array(64)])],
    });
    connector.close();
    const outcome = await settled(
      connector.chat({ messages: [{ role: 'user', content: 'Hello?' }], maxTokens: 16 }),
    );
    expect(outcome).toBeInstanceOf(LlmError);
    expect((outcome as LlmError).code).toBe('DISCONNECTED');
    expect(SilentWorker.started).toHaveLength(0);
  });
});
