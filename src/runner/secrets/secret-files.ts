import { chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { CodedError } from '../../errors.js';
import { MIN_SECRET_LENGTH } from '../../log/secrets.js';
import { writeFileAtomic } from '../../util/atomic-write.js';

/**
 * Writing the runner's secrets directory (secrets.ts reads it): one file per variable,
 * the folder 0700 and each file 0600, in the operator's config home, never in the data
 * directory (secretsDir refuses that). Values never reach the command line (shell history,
 * `ps`) nor a log: they come on stdin.
 */

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Pure: a value as the secrets directory keeps it, or a CodedError saying what is wrong (never quoting it). */
export function checkSecret(variable: string, value: string): string {
  if (!ENV_NAME.test(variable)) {
    throw new CodedError('USAGE', `${JSON.stringify(variable)} cannot be an environment variable name: use A-Z, a-z, 0-9 and _ (such as ANTHROPIC_API_KEY).`);
  }
  const trimmed = value.replace(/(\r?\n)+$/, '').trim();
  if (trimmed === '') throw new CodedError('USAGE', `No value for ${variable}: paste it, or pipe it in (printf %s "$VALUE" | kernel-runner secret set …).`);
  if (trimmed.length < MIN_SECRET_LENGTH) {
    throw new CodedError('USAGE', `The value for ${variable} is shorter than ${MIN_SECRET_LENGTH} characters: too short to be kept out of logs reliably, so it is refused.`);
  }
  if (/[\r\n]/.test(trimmed)) throw new CodedError('USAGE', `The value for ${variable} spans several lines; a credential is one line. Paste only the token or key.`);
  return trimmed;
}

/** Write `<dir>/<variable>` (0600, the folder 0700); returns the file. */
export async function writeSecret(dir: string, variable: string, value: string): Promise<string> {
  const checked = checkSecret(variable, value);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const file = path.join(dir, variable);
  await writeFileAtomic(file, `${checked}\n`, 0o600);
  return file;
}

/** The variables in the folder (names and when they were set; never values). */
export async function listSecrets(dir: string): Promise<{ variable: string; modified: Date }[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const listed: { variable: string; modified: Date }[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('.') || !ENV_NAME.test(name)) continue;
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (info?.isFile()) listed.push({ variable: name, modified: info.mtime });
  }
  return listed;
}

/** Remove `<dir>/<variable>`; false when it was not there. */
export async function removeSecret(dir: string, variable: string): Promise<boolean> {
  if (!ENV_NAME.test(variable)) throw new CodedError('USAGE', `${JSON.stringify(variable)} cannot be an environment variable name.`);
  const file = path.join(dir, variable);
  if (!(await stat(file).catch(() => undefined))) return false;
  await rm(file);
  return true;
}
