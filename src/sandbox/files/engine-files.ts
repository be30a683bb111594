import path from 'node:path';
import type { Readable } from 'node:stream';
import { CodedError, describeError } from '../../errors.js';
import type { AgentEntry, AgentFiles } from '../../util/agent-files.js';
import { componentsOf, refused } from '../../util/untrusted-dir.js';
import type { MoveOutcome } from '../../util/untrusted-write.js';
import { DockerSandbox } from '../docker-sandbox.js';
import { type Engine, statusCode } from '../engine/engine.js';
import { packTar, readOneFile } from './engine-tar.js';

/**
 * The agent's files when the data directory is a volume on the engine's side (a remote engine):
 * the host has no folder to open, so every read and write goes through the engine's API on the
 * instance's container, where the volume is mounted at the data directory's path.
 *
 * - read: `getArchive` of the one path, parsed by engine-tar.ts (one regular file, bounded,
 *   the transfer cut the moment it is anything else or too big);
 * - write, make folders: `putArchive` of a tar we build (the engine replaces what is at a name,
 *   a link itself, never its target);
 * - what a path is: the archive API's stat (`HEAD`), which does not follow the last component;
 * - list, move, remove: an exec of a fixed command (`find`, `mv`, `rm`) as the container's root,
 *   its output bounded and parsed as hostile (the agent can replace those programs: then its own
 *   post office misbehaves, nothing on the host).
 *
 * The engine resolves every path inside the container (links on the way stay within the
 * container's own files), so nothing here can reach the engine's host or ours; and no byte of the
 * volume is ever written to a host path. Each call has a deadline.
 */

export interface EngineFilesOptions {
  readonly engine: Engine;
  /** The instance's container (running, for list/move/remove). */
  readonly container: string;
  /** Where the volume is mounted inside it: the instance's data directory path. */
  readonly dataDir: string;
  /** The volume's name, for messages. */
  readonly volume: string;
  readonly timeoutMs?: number;
}

/** Most a listing may print: 20,000 names of 255 bytes fit; a flood beyond it is cut and refused. */
const LIST_MAX_BYTES = 6 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Go's os.FileMode type bits, as the archive API's stat reports them. */
const MODE_DIR = 2 ** 31;
const MODE_SYMLINK = 1 << 27;
/** Device, named pipe, socket, character device, irregular. */
const MODE_SPECIAL = (1 << 26) | (1 << 25) | (1 << 24) | (1 << 21) | (1 << 19);

/** The engine's stat of a path (X-Docker-Container-Path-Stat: base64 JSON, Go's FileMode bits), the last component not followed. */
function parsePathStat(file: string, header: string | undefined): PathStat {
  let parsed: { mode?: unknown; size?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(header ?? '', 'base64').toString('utf8')) as { mode?: unknown; size?: unknown };
  } catch (error) {
    throw refused(file, 'has no stat the engine could give', 'Check the engine.', error);
  }
  const mode = typeof parsed.mode === 'number' ? parsed.mode : -1;
  const size = typeof parsed.size === 'number' ? parsed.size : 0;
  if (mode < 0) throw refused(file, 'has no stat the engine could give', 'Check the engine.');
  const low = mode % MODE_DIR;
  const kind: AgentEntry['kind'] = mode >= MODE_DIR ? 'dir' : low & MODE_SYMLINK ? 'link' : low & MODE_SPECIAL ? 'other' : 'file';
  return { kind, size };
}

interface PathStat {
  kind: AgentEntry['kind'];
  size: number;
}

export class EngineAgentFiles implements AgentFiles {
  readonly local = false;
  readonly where: string;
  private readonly sandbox: DockerSandbox;
  private readonly timeoutMs: number;

  constructor(private readonly options: EngineFilesOptions) {
    this.where = `volume ${options.volume} on ${options.engine.address}`;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.sandbox = new DockerSandbox({ engine: options.engine, containerName: options.container, cwd: '/', user: '0' });
  }

  private get handle(): ReturnType<Engine['docker']['getContainer']> {
    return this.options.engine.docker.getContainer(this.options.container);
  }

  /** `rel` → its absolute path in the container; `..` refused, names with NUL refused. */
  private inside(rel: string): string {
    const shown = path.posix.join(this.options.dataDir, rel);
    if (rel.includes('\0')) throw refused(shown, 'has a NUL byte in its name', 'Use another name.');
    return path.posix.join(this.options.dataDir, ...componentsOf(rel, shown));
  }

  private async deadline<T>(what: string, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      return await request(controller.signal);
    } catch (error) {
      if (controller.signal.aborted) throw new CodedError('ENGINE_UNREACHABLE', `${what}: the engine at ${this.options.engine.address} gave no answer within ${this.timeoutMs} ms. Check it with agent-kernel doctor.`, { cause: error });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** What is at `file` (the last component not followed); undefined when missing. */
  private async stat(file: string): Promise<PathStat | undefined> {
    let header: string | undefined;
    try {
      const response = await this.deadline(file, (abortSignal) => this.handle.infoArchive({ path: file, abortSignal }) as Promise<unknown>);
      const res = response as { headers?: Record<string, string | undefined>; resume?: () => void };
      res.resume?.();
      header = res.headers?.['x-docker-container-path-stat'];
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw this.engineError(file, error);
    }
    return parsePathStat(file, header);
  }

  private engineError(file: string, error: unknown): Error {
    if (error instanceof CodedError) return error;
    const hint = statusCode(error) === 409 || /is not running/i.test(describeError(error)) ? ` Start it: kernel-runner container up or agent-kernel container up.` : '';
    return refused(file, `could not be reached through the engine at ${this.options.engine.address} (${describeError(error).split('\n')[0] ?? ''})`, `Check the container ${this.options.container}.${hint}`, error);
  }

  async read(rel: string, options: { maxBytes: number }): Promise<Uint8Array | undefined> {
    const file = this.inside(rel);
    let stream: Readable;
    try {
      stream = (await this.deadline(file, (abortSignal) => this.handle.getArchive({ path: file, abortSignal }) as Promise<unknown>)) as Readable;
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw this.engineError(file, error);
    }
    // Podman's archive follows a link at the name (inside the container) and sends its target as a
    // plain file, with a stat that still says link; Docker sends the link itself (refused below).
    // A link swapped in after that stat is followed there too, whole: nothing past the stat's size is taken.
    const header = (stream as Readable & { headers?: Record<string, string | undefined> }).headers?.['x-docker-container-path-stat'];
    const stat = header === undefined ? undefined : parsePathStat(file, header);
    if (stat?.kind === 'link') {
      stream.destroy();
      throw refused(file, 'is not a regular file (a symlink: links in the data directory are never followed)', 'Replace it with a regular file.');
    }
    const timer = setTimeout(() => stream.destroy(new Error(`no end within ${this.timeoutMs} ms`)), this.timeoutMs);
    try {
      const data = await readOneFile(stream, file, options.maxBytes);
      if (stat && data.length > stat.size) throw refused(file, `changed while it was read (${data.length} bytes where the engine's stat said ${stat.size}: swapped for a link, or written to)`, 'Read it again once it is still.');
      return data;
    } finally {
      clearTimeout(timer);
    }
  }

  async names(rel: string): Promise<string[] | undefined> {
    return (await this.list(rel))?.map((entry) => entry.name);
  }

  async list(rel: string, options: { limit?: number } = {}): Promise<AgentEntry[] | undefined> {
    const dir = this.inside(rel);
    const what = await this.stat(dir);
    if (!what) return undefined;
    if (what.kind !== 'dir') throw refused(dir, 'is not a folder (links in the data directory are never followed)', 'Replace it with a folder.');
    const result = await this.run(dir, ['find', dir, '-mindepth', '1', '-maxdepth', '1', '-printf', '%y/%m/%f\\0'], LIST_MAX_BYTES);
    if (result.exitCode !== 0) throw refused(dir, `could not be listed (find exited ${result.exitCode}: ${result.stderr.slice(0, 200).trim()})`, 'Check the folder.');
    const entries: AgentEntry[] = [];
    for (const line of result.stdout.split('\0')) {
      const match = /^([a-zA-Z])\/([0-7]{1,4})\/([^/]+)$/s.exec(line);
      if (!match || match[3] === '.' || match[3] === '..') continue;
      const kind = match[1] === 'f' ? 'file' : match[1] === 'd' ? 'dir' : match[1] === 'l' ? 'link' : 'other';
      entries.push({ name: match[3] as string, kind, mode: parseInt(match[2] as string, 8) });
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return options.limit === undefined ? entries : entries.slice(0, options.limit);
  }

  /** A fixed command in the container as its root, bounded in time and output; the output is the agent's to forge. */
  private async run(file: string, argv: string[], maxOutputBytes = 64 * 1024): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    const result = await this.sandbox.run(argv, { timeoutMs: this.timeoutMs, maxOutputBytes }).catch((error: unknown) => {
      throw this.engineError(file, error);
    });
    if (result.timedOut) throw refused(file, `took longer than ${this.timeoutMs} ms inside the container`, 'Check the container.');
    if (result.outputCapped) throw refused(file, `gave more than ${maxOutputBytes} bytes of listing`, 'Empty the folder.');
    return result;
  }

  async writeNew(rel: string, data: Uint8Array | string, mode = 0o644): Promise<boolean> {
    const file = this.inside(rel);
    if (await this.stat(file)) return false;
    await this.put(rel, data, mode);
    return true;
  }

  async writeAtomic(rel: string, data: Uint8Array | string, mode = 0o644): Promise<void> {
    await this.put(rel, data, mode);
  }

  /** One file through `putArchive` into its folder (made first when missing). */
  private async put(rel: string, data: Uint8Array | string, mode: number): Promise<void> {
    const file = this.inside(rel);
    const parts = componentsOf(rel, file);
    const name = parts.pop();
    if (name === undefined) throw refused(file, 'names the data directory itself, not a file', 'Name a file.');
    const archive = await packTar([{ name, data: typeof data === 'string' ? Buffer.from(data) : data, mode }]);
    const folder = path.posix.join(this.options.dataDir, ...parts);
    if ((await this.stat(folder))?.kind !== 'dir') await this.makeDirs(parts.join('/'));
    await this.putArchive(file, folder, archive);
  }

  private async putArchive(file: string, folder: string, archive: Buffer): Promise<void> {
    try {
      await this.deadline(file, (abortSignal) => this.handle.putArchive(archive, { path: folder, noOverwriteDirNonDir: true, abortSignal } as never) as Promise<unknown>);
    } catch (error) {
      throw this.engineError(file, error);
    }
  }

  async makeDirs(rel: string): Promise<void> {
    const parts = componentsOf(rel, this.inside(rel));
    if (parts.length === 0) return;
    // Each existing component must be a folder: a link there is refused, never followed (or replaced: it is the agent's).
    const dirs: string[] = [];
    for (let index = 1; index <= parts.length; index++) {
      const prefix = parts.slice(0, index).join('/');
      const what = await this.stat(path.posix.join(this.options.dataDir, prefix));
      if (what && what.kind !== 'dir') throw refused(path.posix.join(this.options.dataDir, prefix), 'is a link or a file where a folder is needed, and links in the data directory are never followed', 'Replace it with a folder.');
      if (!what) dirs.push(`${prefix}/`);
    }
    if (dirs.length > 0) await this.putArchive(this.inside(rel), this.options.dataDir, await packTar(dirs.map((name) => ({ name, mode: 0o755 }))));
  }

  async move(from: string, to: string): Promise<MoveOutcome> {
    const source = this.inside(from);
    const target = this.inside(to);
    const what = await this.stat(source);
    if (!what) return 'missing';
    if (what.kind !== 'file') throw refused(source, 'is a link or special file, not a regular file', 'Remove it.');
    await this.makeDirs(path.posix.dirname(componentsOf(to, target).join('/')));
    const result = await this.run(source, ['mv', '-f', '-T', '--', source, target]);
    if (result.exitCode !== 0) {
      if (!(await this.stat(source))) return 'missing';
      throw refused(source, `cannot be moved to ${target} (${result.stderr.slice(0, 200).trim()})`, 'Check what is at that name there.');
    }
    return 'moved';
  }

  async remove(rel: string): Promise<boolean> {
    const file = this.inside(rel);
    const what = await this.stat(file);
    if (!what) return false;
    if (what.kind === 'dir') throw refused(file, 'is a folder', 'Remove it yourself.');
    const result = await this.run(file, ['rm', '-f', '--', file]);
    if (result.exitCode !== 0) throw refused(file, `cannot be removed (${result.stderr.slice(0, 200).trim()})`, 'Check what is at that name.');
    return true;
  }
}
