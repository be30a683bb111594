import type { Instance } from '../config/instance.js';
import { CodedError } from '../errors.js';
import { isNoKernel } from '../kernel/client/link.js';
import { typeAsPerson } from '../kernel/client/terminal-client.js';
import { MAX_PERSON_KEYS_BYTES } from '../kernel/protocol.js';
import { kernelSocketPath } from '../kernel/socket-path.js';

/** The most one request may type (a paste). */
export const MAX_PERSON_INPUT_BYTES = MAX_PERSON_KEYS_BYTES;

/**
 * A person types into an agent's terminal (web view started with --write): the keys go to the
 * instance's kernel, which types them byte for byte in turn with the agent's calls and logs
 * them as an event the agent is shown at its next wait.
 */
export function typeForPerson(instance: Instance, tty: number, data: string): Promise<number> {
  // Keys from several requests (tabs) must arrive in order: one request at a time per terminal.
  const key = `${instance.name}:${tty}`;
  const run = (queues.get(key) ?? Promise.resolve()).then(() => send(instance, tty, data));
  const tail = run.catch(() => undefined).then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  queues.set(key, tail);
  return run;
}

const queues = new Map<string, Promise<unknown>>();

async function send(instance: Instance, tty: number, data: string): Promise<number> {
  const bytes = Buffer.byteLength(data, 'utf8');
  if (bytes === 0) return 0;
  if (bytes > MAX_PERSON_INPUT_BYTES) throw new CodedError('USAGE', `At most ${MAX_PERSON_INPUT_BYTES} bytes at a time; got ${bytes}.`);
  try {
    return await typeAsPerson(kernelSocketPath(instance.paths.stateRoot), tty, data);
  } catch (error) {
    if (!isNoKernel(error)) throw error;
    throw new CodedError('KERNEL_UNREACHABLE', `No kernel runs for ${instance.name}, so nothing reads its terminals or takes keys now. Start it with kernel-runner watch ${instance.name}, then type again.`, { cause: error });
  }
}
