import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Instance } from '../../config/instance.js';
import { secretsPath } from '../../config/paths.js';
import { configHome } from '../../config/registry.js';
import { type Logger, registerSecrets } from '../../log/logger.js';
import type { TickEnvironmentParts } from '../harnesses/claude-credentials.js';
import { CodedError } from '../../errors.js';
import { MIN_SECRET_LENGTH } from '../../log/secrets.js';
import { isWithin } from '../../util/within.js';

/**
 * Secrets for the harness environment: a directory where each file is one variable
 * (file name = variable name, content = value, trailing newlines trimmed). Dotfiles and
 * directories are skipped, as are names that cannot be environment variables and values of
 * 1-5 characters (too short to redact from logs, see log/secrets.ts); a missing
 * directory means no secrets. Values are never logged: only names are reported.
 */

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `runner.secrets_dir` (relative to the config home) or `<config home>/secrets/<name>/`. Never
 * inside the data directory: the agent could write variables (NODE_OPTIONS...) into the harness.
 */
export function secretsDir(name: string, dataDir: string, configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const dir = secretsPath(name, configured, env);
  if (isWithin(dir, dataDir)) {
    throw new CodedError(
      'CONFIG_REFUSED',
      `runner.secrets_dir ${dir} is inside the data directory, which the agent can write: it could add variables to the harness environment. Keep secrets outside it (default ${path.join(configHome(env), 'secrets', name)}).`,
      { details: { dir } },
    );
  }
  return dir;
}

export interface LoadedSecrets {
  readonly values: Readonly<Record<string, string>>;
  /** Files that were not loaded, with why (names only, never contents). */
  readonly skipped: readonly { file: string; reason: string }[];
}

export async function loadSecrets(dir: string): Promise<LoadedSecrets> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { values: {}, skipped: [] };
    throw error;
  }
  const values: Record<string, string> = {};
  const skipped: { file: string; reason: string }[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isDirectory()) continue;
    if (!ENV_NAME.test(entry.name)) {
      skipped.push({ file: entry.name, reason: 'not a valid environment variable name (use A-Z, a-z, 0-9 and _)' });
      continue;
    }
    let content: string;
    try {
      // readFile follows symlinks, so a secret may link to a file elsewhere (a tmpfs, a vault mount).
      content = await readFile(path.join(dir, entry.name), 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EISDIR') continue;
      skipped.push({ file: entry.name, reason: `cannot be read (${code ?? 'error'})` });
      continue;
    }
    const value = content.replace(/(\r?\n)+$/, '');
    if (value.length > 0 && value.length < MIN_SECRET_LENGTH) {
      skipped.push({
        file: entry.name,
        reason: `its value is shorter than ${MIN_SECRET_LENGTH} characters, too short to redact from logs reliably, so it is not passed on: use a longer value`,
      });
      continue;
    }
    values[entry.name] = value;
  }
  return { values, skipped };
}

/** Pure: the harness environment from the runner's own, the secrets, then `runner.env` (which wins). */
export function harnessEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  secrets: Readonly<Record<string, string>>,
  configured: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) if (value !== undefined) env[key] = value;
  return { ...env, ...secrets, ...configured };
}

/**
 * The environment watch gives a tick's harness: the instance's secrets (names logged, values
 * redacted from every log line from now on), then runner.env; the tick adds its own.
 */
export async function tickEnvironment(instance: Instance, log: Logger, env?: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const runner = instance.config.runner;
  const dir = secretsDir(instance.name, instance.dataDir, runner.secrets_dir, env);
  const secrets = await loadSecrets(dir);
  for (const { file, reason } of secrets.skipped) log.warn({ file, dir }, `secret file skipped: ${reason}`);
  // loadSecrets refused values too short to redact.
  registerSecrets(log, Object.values(secrets.values));
  const names = Object.keys(secrets.values);
  if (names.length > 0) log.info({ dir, names }, 'secrets loaded');
  return harnessEnvironment({}, secrets.values, runner.env);
}

/** What the environment a tick gives the harness is made of, and where each part lives (for doctor: never logged). */
export async function tickEnvironmentParts(instance: Instance | undefined, env: NodeJS.ProcessEnv = process.env): Promise<TickEnvironmentParts> {
  if (!instance) return { base: env, secrets: {}, secretsDir: '', configured: {}, operatorConfig: '' };
  const dir = secretsDir(instance.name, instance.dataDir, instance.config.runner.secrets_dir, env);
  const { values } = await loadSecrets(dir);
  return { base: env, secrets: values, secretsDir: dir, configured: instance.config.runner.env, operatorConfig: instance.paths.operatorConfig };
}
