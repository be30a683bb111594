import type { createHash as CreateHash } from 'node:crypto';
import { lstatSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { CodedError } from '../errors.js';

/** sun_path holds 108 bytes with its NUL: longer socket paths cannot be bound. */
const MAX_SOCKET_PATH = 107;

/**
 * The kernel's socket: `<instance state>/private/kernel.sock`, in the host-only folder (0700)
 * the container never sees, so only the operator's user can connect. A state folder whose
 * path is too long for a socket gets one in a private folder of this user's instead
 * (`$XDG_RUNTIME_DIR/agent-kernel`, else `<tmp>/agent-kernel-<uid>`, each checked 0700 and ours).
 */
export function kernelSocketPath(stateRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  const preferred = path.join(stateRoot, 'private', 'kernel.sock');
  if (Buffer.byteLength(preferred) <= MAX_SOCKET_PATH) return preferred;
  // node:crypto only here: loading it would cost `serve`'s bridge a few ms at every tick's login.
  const { createHash } = createRequire(import.meta.url)('node:crypto') as { createHash: typeof CreateHash };
  const digest = createHash('sha256').update(path.resolve(stateRoot)).digest('hex').slice(0, 20);
  return path.join(shortPrivateDir(env), `${digest}.sock`);
}

/**
 * A short folder for sockets that only this user can enter: `$XDG_RUNTIME_DIR/agent-kernel`, else
 * `<tmp>/agent-kernel-<uid>`. A name in a shared folder can be taken first by another user (a folder,
 * a file or a link planted there), so the first of `<name>`, `<name>-1`, … that is missing or is a
 * real folder of this user's with mode 0700 is the one: every process of the user picks the same,
 * and what another user planted stops nothing.
 */
export function shortPrivateDir(env: NodeJS.ProcessEnv = process.env): string {
  const uid = process.getuid?.() ?? 0;
  const base = env.XDG_RUNTIME_DIR ? path.join(env.XDG_RUNTIME_DIR, 'agent-kernel') : path.join(os.tmpdir(), `agent-kernel-${uid}`);
  for (let n = 0; n < 32; n++) {
    const dir = n === 0 ? base : `${base}-${n}`;
    const seen = privateDirState(dir);
    if (seen === 'ours' || seen === 'missing') return dir;
  }
  throw new CodedError('CONFIG_REFUSED', `${base} and 31 names after it are taken by another user or are not private: move them away and start again.`, { details: { dir: base } });
}

function privateDirState(dir: string): 'ours' | 'missing' | 'taken' {
  try {
    const stat = lstatSync(dir);
    const uid = process.getuid?.();
    return stat.isDirectory() && (uid === undefined || stat.uid === uid) && (stat.mode & 0o077) === 0 ? 'ours' : 'taken';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'taken';
  }
}

/**
 * Make sure the socket's folder is a real folder of this user's that nobody else may enter
 * (created 0700 when missing); anything else (a link, another owner, group or world access)
 * is refused: a socket there could be someone else's.
 */
export function ensurePrivateSocketDir(socketPath: string, create: boolean): void {
  const dir = path.dirname(socketPath);
  if (create) mkdirSync(dir, { recursive: true, mode: 0o700 });
  let stat;
  try {
    stat = lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !create) return;
    throw error;
  }
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    throw new CodedError('CONFIG_REFUSED', `${dir} must be a folder of this user's that nobody else can enter (mode 0700), not a link; move it away and start again.`, {
      details: { dir },
    });
  }
}
