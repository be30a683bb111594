import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { instancePaths } from '../../config/paths.js';
import { ensureStateDirs } from '../../config/state-dir.js';
import { configHome, registerInstance, validateInstanceName } from '../../config/registry.js';
import { ensurePrivateDir } from '../../config/private-dir.js';
import { CodedError, isCodedError } from '../../errors.js';
import { kindOfUntrusted, relativeInside } from '../../util/untrusted-fs.js';
import { makeUntrustedDirs, writeUntrustedNew } from '../../util/untrusted-write.js';
import { packageFiles } from '../../config/package-files.js';

const run = promisify(execFile);

/**
 * What init writes into the data directory. It may run again on a repo the agent has written:
 * folders on the way are never followed through a link, and nothing that is there already (a
 * file, a link, a FIFO) is written through or replaced (util/untrusted-write.ts).
 */
class DataWriter {
  readonly created: string[] = [];
  readonly refused: string[] = [];
  constructor(readonly root: string) {}

  async file(file: string, content: string | Buffer, mode?: number): Promise<void> {
    await this.guard(file, async () => {
      if (await writeUntrustedNew(this.root, relativeInside(this.root, file), content, mode)) this.created.push(file);
    });
  }

  async dir(dir: string): Promise<void> {
    await this.guard(dir, () => makeUntrustedDirs(this.root, relativeInside(this.root, dir)));
  }

  private async guard(file: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (!isCodedError(error, 'UNTRUSTED_FILE')) throw error;
      this.refused.push(error.message);
    }
  }
}

/** The operator's file, in the host-private config folder (0700, the file 0600): written unless it exists (never the data directory). */
async function writeOperatorFile(file: string, content: string, created: string[], env: NodeJS.ProcessEnv): Promise<void> {
  await ensurePrivateDir(path.dirname(file), configHome(env));
  const wrote = await writeFile(file, content, { flag: 'wx', mode: 0o600 }).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') return false;
      throw error;
    },
  );
  if (wrote) created.push(file);
}

/** Copy a host folder (trusted) into the data directory through the writer, file by file. */
async function copyInto(writer: DataWriter, source: string, target: string): Promise<void> {
  await writer.dir(target);
  for (const entry of await readdir(source, { withFileTypes: true })) {
    const from = path.join(source, entry.name);
    const to = path.join(target, entry.name);
    if (entry.isDirectory()) await copyInto(writer, from, to);
    else if (entry.isFile()) await writer.file(to, await readFile(from), (await stat(from)).mode & 0o777);
  }
}

/**
 * `git init` for the data repo, without running git on a path the agent could swap: the
 * repository is made in a host-private temp folder and its `.git` copied in.
 */
async function gitInit(writer: DataWriter): Promise<void> {
  const temp = await mkdtemp(path.join(os.tmpdir(), 'agent-kernel-init-'));
  try {
    await run('git', ['init', '-q', temp]);
    // Its files are not counted as created; a refusal is still reported.
    const git = new DataWriter(writer.root);
    await copyInto(git, path.join(temp, '.git'), path.join(writer.root, '.git'));
    writer.refused.push(...git.refused);
  } catch (error) {
    if (isCodedError(error)) throw error;
    throw new CodedError('INTERNAL', `git init failed: ${(error as Error).message}. Is git installed?`, { cause: error });
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

const HOOK_READMES: Record<string, string> = {
  'pre-tick': `# pre-tick hooks

Executable files here run inside the container before the agent starts, in sorted order
(name them 10-foo, 20-bar...). Dotfiles, files ending in ~ and files that are not
executable are skipped. Each gets 60 s; a failure is logged and never stops the tick.

Environment: DATA_DIR (the data repo inside the container) and AGENT_TICK (the tick
number; the AGENT prefix is hook_env_prefix in system/agent_config.json).

Example (save as 10-pull, then chmod +x 10-pull):

    #!/bin/sh
    cd "$DATA_DIR" && git pull --ff-only || true
`,
  'pre-stop': `# pre-stop hooks

Executable files here run inside the container when the agent wants to end its tick
(30 s each). Every line a hook prints is a blocking issue: the agent is told about it and
keeps working. A hook that fails or times out reports nothing (fail-open).

Example (save as 10-clean-tree, then chmod +x 10-clean-tree):

    #!/bin/sh
    cd "$DATA_DIR" && git status --porcelain | sed 's/^/uncommitted: /'
`,
  'post-tick': `# post-tick hooks

Executable files here run inside the container after the tick, in sorted order (60 s
each, failures logged and never fatal). After them, when the operator has set
runner.push.remote, kernel-runner pushes your current branch (or runner.push.branch)
to that remote: it takes a git bundle of the branch from inside the container and
pushes it from a mirror of its own. Your repo's hooks, config and remotes play no part
in that push (they still apply to the git you run here).

Environment: DATA_DIR, AGENT_TICK, AGENT_TICK_DURATION (seconds), AGENT_TICK_LOG (the
tick's transcript), AGENT_LAST_MESSAGE, AGENT_SESSION_ID, AGENT_TICK_STATUS (normal or
abnormal).

Example (save as 10-commit, then chmod +x 10-commit):

    #!/bin/sh
    cd "$DATA_DIR" && git add -A && git commit -qm "tick $AGENT_TICK" || true
`,
};

export interface InitResult {
  name: string;
  dataDir: string;
  created: string[];
  /** Files init did not write because a link or special file is in the way (each a sentence naming the fix). */
  refused: string[];
  gitInitialized: boolean;
}

/**
 * Create (or complete) a data repo and register its name. Existing files are kept, so
 * running init on an existing repo only adds what is missing.
 */
export async function initInstance(name: string, dir: string, env: NodeJS.ProcessEnv = process.env): Promise<InitResult> {
  validateInstanceName(name);
  const dataDir = path.resolve(dir);
  const paths = instancePaths(name, dataDir, env);

  const containerfile = packageFiles().defaultContainerfile;
  let containerfileText: string;
  try {
    containerfileText = await readFile(containerfile, 'utf8');
  } catch (error) {
    throw new CodedError('INTERNAL', `The default Containerfile ${containerfile} cannot be read (${(error as Error).message}); reinstall agent-kernel.`, {
      cause: error,
    });
  }

  const existing = await stat(dataDir).catch(() => undefined);
  if (existing && !existing.isDirectory()) {
    throw new CodedError('USAGE', `${dataDir} exists and is not a directory: pick a directory for the data repo (it is created when missing).`);
  }
  await mkdir(dataDir, { recursive: true });
  const write = new DataWriter(dataDir);
  // The agent's file holds what it may tune; the operator's, out of its reach, everything with host effect.
  await write.file(paths.agentConfig, JSON.stringify({ hook_env_prefix: 'AGENT', tty: {}, runner: {} }, null, 2) + '\n');
  await writeOperatorFile(paths.operatorConfig, JSON.stringify({ container: {}, runner: { harness: 'claude-code' } }, null, 2) + '\n', write.created, env);
  await write.file(paths.startup, JSON.stringify({ terminals: [{ tty: 0 }] }, null, 2) + '\n');
  await write.file(paths.containerfile, containerfileText);
  for (const [kind, dirPath] of [
    ['pre-tick', paths.hooks.preTick],
    ['pre-stop', paths.hooks.preStop],
    ['post-tick', paths.hooks.postTick],
  ] as const) {
    await write.file(path.join(dirPath, 'README.md'), HOOK_READMES[kind] ?? '');
  }
  await write.dir(paths.inbox);
  await write.file(path.join(paths.inbox, '.gitkeep'), '');
  await write.file(path.join(dataDir, '.gitignore'), '# agent-kernel: live state and logs stay out of the repo\ntmp/\nsystem/logs/\n');

  // Anything already at .git (a repo, or a link the agent planted) is left alone.
  const gitInitialized = (await kindOfUntrusted(dataDir, '.git')) === undefined;
  if (gitInitialized) await gitInit(write);
  await registerInstance(name, dataDir, env);
  await ensureStateDirs(paths);
  return { name, dataDir, created: write.created, refused: write.refused, gitInitialized };
}
