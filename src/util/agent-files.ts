import { listUntrusted, listUntrustedNames, readUntrusted, type UntrustedEntry } from './untrusted-fs.js';
import { type MoveOutcome, makeUntrustedDirs, moveUntrusted, removeUntrusted, writeUntrustedAtomic, writeUntrustedNew } from './untrusted-write.js';

/**
 * "The agent's files": the one way host code reaches into an instance's data directory, whichever
 * side of the engine it lives on. Everything read through it is hostile input (the agent is root
 * in its container and writes all of it); every path is relative to the data directory and climbs
 * out with nothing (`..` is refused).
 *
 * Two implementations share these rules: `LocalAgentFiles` (the data directory is a host folder,
 * bind-mounted into the container: util/untrusted-*.ts, no link followed at any component, only
 * regular files read, every read bounded) and the engine's (sandbox/files/engine-files.ts: the data
 * directory is a volume on the engine's side, reached only through the engine's API).
 */
export interface AgentFiles {
  /** Where the files are, for messages ("/srv/agents/a", "volume agent-kernel-a-data on tcp://h:2376"). */
  readonly where: string;
  /** Whether the data directory is a host folder (fs.watch works on it; host-only consumers may use the path). */
  readonly local: boolean;
  /**
   * The regular file `rel`, at most `maxBytes`; undefined when missing. Throws UNTRUSTED_FILE
   * for a link, FIFO, device or folder there, or a file over the limit (never read whole).
   */
  read(rel: string, options: { maxBytes: number }): Promise<Uint8Array | undefined>;
  /** Only the names in the folder `rel`, sorted (cheap for a folder the agent flooded); undefined when missing. */
  names(rel: string): Promise<string[] | undefined>;
  /** The entries of the folder `rel` by name (links are never followed to say more); undefined when missing. */
  list(rel: string, options?: { limit?: number }): Promise<AgentEntry[] | undefined>;
  /** Create `rel` unless anything is at that name; folders on the way are made. Returns whether it wrote. */
  writeNew(rel: string, data: Uint8Array | string, mode?: number): Promise<boolean>;
  /** Replace `rel` (a planted link is replaced itself, never written through). */
  writeAtomic(rel: string, data: Uint8Array | string, mode?: number): Promise<void>;
  /** Rename the regular file `from` to `to` inside the data directory; a link or special file is refused. */
  move(from: string, to: string): Promise<MoveOutcome>;
  /** Remove the entry `rel` (a link itself, never its target). Returns whether something was there. */
  remove(rel: string): Promise<boolean>;
  /** Make the folders `rel` where missing (a link on the way is refused or replaced, never followed). */
  makeDirs(rel: string): Promise<void>;
}

export interface AgentEntry {
  readonly name: string;
  readonly kind: UntrustedEntry['kind'];
  /** Permission bits (0o7777) as listed: what the entry claims, e.g. whether a hook is executable. */
  readonly mode: number;
}

/** The data directory as a host folder (bind-mounted into the container): today's code path. */
export class LocalAgentFiles implements AgentFiles {
  readonly local = true;
  constructor(readonly root: string) {}

  get where(): string {
    return this.root;
  }

  async read(rel: string, options: { maxBytes: number }): Promise<Uint8Array | undefined> {
    return (await readUntrusted(this.root, rel, options))?.data;
  }

  names(rel: string): Promise<string[] | undefined> {
    return listUntrustedNames(this.root, rel);
  }

  async list(rel: string, options: { limit?: number } = {}): Promise<AgentEntry[] | undefined> {
    const entries = await listUntrusted(this.root, rel, options.limit === undefined ? {} : { limit: options.limit });
    return entries?.map(({ name, kind, mode }) => ({ name, kind, mode }));
  }

  writeNew(rel: string, data: Uint8Array | string, mode?: number): Promise<boolean> {
    return writeUntrustedNew(this.root, rel, data, mode);
  }

  writeAtomic(rel: string, data: Uint8Array | string, mode?: number): Promise<void> {
    return writeUntrustedAtomic(this.root, rel, data, mode);
  }

  move(from: string, to: string): Promise<MoveOutcome> {
    return moveUntrusted(this.root, from, to);
  }

  remove(rel: string): Promise<boolean> {
    return removeUntrusted(this.root, rel);
  }

  makeDirs(rel: string): Promise<void> {
    return makeUntrustedDirs(this.root, rel);
  }
}
