import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CodedError, describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { Engine } from './engine.js';
import { type ProgressCallback, imageExists } from './image.js';
import { eventLine, readEngineEvents } from './progress.js';

export const DEFAULT_BASE_IMAGE = 'debian:bookworm-slim';

/** Trim the root file system the way the slim images do: no docs, man pages or locales. */
const SLIM_DPKG_OPTIONS = [
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/locale/*',
  'path-include=/usr/share/locale/locale.alias',
];

const DEBIAN_SUITES = new Set(['bullseye', 'bookworm', 'trixie', 'forky', 'sid', 'stable', 'testing', 'unstable', 'oldstable']);

/** `debian:bookworm-slim` → bookworm; anything that does not name a Debian suite gets bookworm. */
export function suiteForTag(tag: string): string {
  const version = tag.includes(':') ? tag.slice(tag.lastIndexOf(':') + 1) : '';
  const suite = version.replace(/-slim$/, '');
  return DEBIAN_SUITES.has(suite) ? suite : 'bookworm';
}

/** Pure: the mmdebstrap command line for a slim root file system as a tar. */
export function mmdebstrapArgs(suite: string, output: string, mirror?: string): string[] {
  return [
    '--variant=apt',
    '--format=tar',
    ...SLIM_DPKG_OPTIONS.map((option) => `--dpkgopt=${option}`),
    '--aptopt=Acquire::Retries "3"',
    suite,
    output,
    ...(mirror ? [mirror] : []),
  ];
}

export interface BootstrapOptions {
  tag?: string;
  force?: boolean;
  logger: Logger;
  onProgress?: ProgressCallback | undefined;
  /** A Debian mirror URL; default mmdebstrap's (deb.debian.org). AGENT_KERNEL_DEBIAN_MIRROR sets it too. */
  mirror?: string | undefined;
}

export interface BootstrapResult {
  tag: string;
  /** True when the image was already there and nothing was done. */
  skipped: boolean;
}

function runMmdebstrap(args: string[], logger: Logger, onProgress?: ProgressCallback): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mmdebstrap', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const onLine = (line: string): void => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      logger.debug({ tool: 'mmdebstrap' }, line);
      onProgress?.(line);
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        reject(
          new CodedError(
            'BASE_IMAGE_MISSING',
            'mmdebstrap is not installed, so the base image cannot be built offline. Install it (as root): apt-get install -y mmdebstrap; or run npm run setup, which does.',
          ),
        );
      } else reject(error);
    });
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else {
        reject(
          new CodedError(
            'IMAGE_BUILD_FAILED',
            `mmdebstrap ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${tail.map((l) => `  ${l}`).join('\n')}\nIt needs root (or unprivileged user namespaces) and a reachable Debian mirror.`,
          ),
        );
      }
    });
  });
}

/**
 * Build a Debian base image offline-from-a-registry: mmdebstrap a minimal root file system
 * (the apt variant, trimmed like the slim images) and import it under `tag`. Idempotent:
 * an existing tag is left alone unless `force`.
 */
export async function bootstrapBaseImage(engine: Engine, options: BootstrapOptions): Promise<BootstrapResult> {
  const tag = options.tag ?? DEFAULT_BASE_IMAGE;
  const { logger, onProgress } = options;
  if (!options.force && (await imageExists(engine, tag))) {
    onProgress?.(`${tag} is already on ${engine.name}; nothing to do (--force rebuilds it)`);
    return { tag, skipped: true };
  }
  const suite = suiteForTag(tag);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'agent-kernel-bootstrap-'));
  const tarball = path.join(workDir, 'rootfs.tar');
  try {
    onProgress?.(`mmdebstrap: building a ${suite} root file system`);
    await runMmdebstrap(mmdebstrapArgs(suite, tarball, options.mirror ?? process.env.AGENT_KERNEL_DEBIAN_MIRROR), logger, onProgress);
    onProgress?.(`importing it as ${tag}`);
    // The whole reference goes in `repo`: Podman's compatible API ignores a separate `tag` (it would import as :latest).
    const stream = await engine.docker.importImage(createReadStream(tarball) as unknown as string, {
      repo: tag,
      changes: ['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'CMD ["bash"]', `LABEL agent-kernel.bootstrap=${suite}`],
    } as object);
    const errors = await readEngineEvents(stream, (event) => {
      const line = eventLine(event);
      if (line) logger.debug({ tag }, line);
    });
    const failed = errors[0];
    if (failed) throw new Error(failed.error);
  } catch (error) {
    if (error instanceof CodedError) throw error;
    throw new CodedError('IMAGE_BUILD_FAILED', `Importing the root file system as ${tag} failed: ${describeError(error)}`, { cause: error });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  if (!(await imageExists(engine, tag))) {
    throw new CodedError('IMAGE_BUILD_FAILED', `The import finished, but ${tag} is not on the engine. Run again with AGENT_KERNEL_LOG_LEVEL=debug to see the engine's answer.`);
  }
  onProgress?.(`${tag} is ready`);
  return { tag, skipped: false };
}
