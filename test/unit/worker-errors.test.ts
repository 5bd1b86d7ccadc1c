// Errors keep their `code` across the worker boundary (src/worker-errors.ts): the engine behind
// Comlink on one end of a MessageChannel, the page's proxy on the other, as in the app.
import { expose, wrap, type Remote } from 'comlink';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelUnavailableError } from '../../src/embeddings/embedder';
import { keepErrorCodes } from '../../src/worker-errors';

interface Engine {
  modelInfo(): Promise<{ id: string }>;
  plain(): Promise<void>;
  notAnError(): Promise<void>;
}

const engine: Engine = {
  modelInfo: () =>
    Promise.reject(new ModelUnavailableError('Embedding model X could not be loaded: offline')),
  plain: () => Promise.reject(new TypeError('no code here')),
  notAnError: () => Promise.reject({ code: 'NOT_AN_ERROR', detail: 1 }),
};

const channels: MessageChannel[] = [];
afterEach(() => {
  for (const c of channels.splice(0)) {
    c.port1.close();
    c.port2.close();
  }
});

function connect(): Remote<Engine> {
  keepErrorCodes();
  const channel = new MessageChannel();
  channels.push(channel);
  expose(engine, channel.port1);
  return wrap<Engine>(channel.port2);
}

describe('errors across the worker boundary', () => {
  it('modelInfo() rejects with the error’s code, name and message', async () => {
    const err = await connect()
      .modelInfo()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({
      name: 'ModelUnavailableError',
      code: 'MODEL_UNAVAILABLE',
      message: 'Embedding model X could not be loaded: offline',
    });
  });

  it('an error without a code arrives without one; a thrown plain object arrives whole', async () => {
    const remote = connect();
    const plain = await remote.plain().catch((e: unknown) => e);
    expect(plain).toMatchObject({ name: 'TypeError', message: 'no code here' });
    expect('code' in (plain as object)).toBe(false);
    await expect(remote.notAnError()).rejects.toEqual({ code: 'NOT_AN_ERROR', detail: 1 });
  });

  it('installing twice changes nothing', async () => {
    keepErrorCodes();
    await expect(connect().modelInfo()).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE' });
  });
});
