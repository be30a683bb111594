import type { Instance } from '../config/instance.js';
import { CodedError } from '../errors.js';
import { appendEvent } from '../observe/events/event-log.js';
import { attachSandbox } from '../sandbox/container/open-sandbox.js';
import { TMUX_SESSION, tmuxArgv, tmuxSocketName } from '../tty/host/tmux-server.js';

/** The most one request may type (a paste). */
export const MAX_PERSON_INPUT_BYTES = 4096;

/**
 * A person types into an agent's terminal (web view started with --write): the bytes go to
 * the terminal's tmux window as keys (`send-keys -H`, byte for byte, so Enter, Ctrl-C and
 * arrow keys arrive as typed), and the typing is logged as an event, which the agent is
 * shown at its next wait.
 */
export function typeForPerson(instance: Instance, tty: number, data: string): Promise<number> {
  // Keys from several requests (tabs) must arrive in order: one send at a time per terminal.
  const key = `${instance.name}:${tty}`;
  const run = (queues.get(key) ?? Promise.resolve()).then(() => sendKeys(instance, tty, data));
  const tail = run.catch(() => undefined).then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  queues.set(key, tail);
  return run;
}

const queues = new Map<string, Promise<unknown>>();

async function sendKeys(instance: Instance, tty: number, data: string): Promise<number> {
  const bytes = Buffer.from(data, 'utf8');
  if (bytes.length === 0) return 0;
  if (bytes.length > MAX_PERSON_INPUT_BYTES) throw new CodedError('USAGE', `At most ${MAX_PERSON_INPUT_BYTES} bytes at a time; got ${bytes.length}.`);
  if (!Number.isInteger(tty) || tty < 0 || tty >= 20) throw new CodedError('TTY_OUT_OF_RANGE', `There is no TTY ${tty}.`);
  const sandbox = await attachSandbox(instance);
  const socket = tmuxSocketName(sandbox, instance.name);
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0'));
  const result = await sandbox.run(tmuxArgv(socket, 'send-keys', '-t', `=${TMUX_SESSION}:${tty}`, '-H', ...hex), { env: { TMUX: '' }, timeoutMs: 10_000 });
  if (result.exitCode !== 0) {
    throw new CodedError('TTY_NOT_FOUND', `TTY ${tty} of ${instance.name} did not take the keys: ${result.stderr.trim() || `tmux exited with ${result.exitCode}`}.`);
  }
  const key = bytes.length === 1 && bytes[0]! < 0x20 ? `C-${String.fromCharCode(bytes[0]! + 0x60)}` : undefined;
  await appendEvent(instance.paths.events, { type: 'person.typed', tty, bytes: bytes.length, ...(key ? { key } : {}) });
  return bytes.length;
}
