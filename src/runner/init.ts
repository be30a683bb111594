import { execFile } from 'node:child_process';
import { access, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { instancePaths } from '../config/paths.js';
import { ensureStateDirs } from '../config/state-dir.js';
import { registerInstance, validateInstanceName } from '../config/registry.js';
import { KernelError } from '../errors.js';
import { kernelFiles } from './kernel-files.js';

const run = promisify(execFile);

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** Write a file unless it exists: init never overwrites what a data repo already has. */
async function writeNew(file: string, content: string, created: string[]): Promise<void> {
  if (await exists(file)) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content, { flag: 'wx' });
  created.push(file);
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
  const created: string[] = [];

  const containerfile = kernelFiles().defaultContainerfile;
  let containerfileText: string;
  try {
    containerfileText = await readFile(containerfile, 'utf8');
  } catch (error) {
    throw new KernelError('INTERNAL', `The default Containerfile ${containerfile} cannot be read (${(error as Error).message}); reinstall agent-kernel.`, {
      cause: error,
    });
  }

  const existing = await stat(dataDir).catch(() => undefined);
  if (existing && !existing.isDirectory()) {
    throw new KernelError('USAGE', `${dataDir} exists and is not a directory: pick a directory for the data repo (it is created when missing).`);
  }
  await mkdir(dataDir, { recursive: true });
  // The agent's file holds what it may tune; the operator's, out of its reach, everything with host effect.
  await writeNew(paths.agentConfig, JSON.stringify({ hook_env_prefix: 'AGENT', tty: {}, runner: {} }, null, 2) + '\n', created);
  await writeNew(paths.operatorConfig, JSON.stringify({ container: {}, runner: { harness: 'claude-code' } }, null, 2) + '\n', created);
  await writeNew(paths.startup, JSON.stringify({ terminals: [{ tty: 0 }] }, null, 2) + '\n', created);
  await writeNew(paths.containerfile, containerfileText, created);
  for (const [kind, dirPath] of [
    ['pre-tick', paths.hooks.preTick],
    ['pre-stop', paths.hooks.preStop],
    ['post-tick', paths.hooks.postTick],
  ] as const) {
    await writeNew(path.join(dirPath, 'README.md'), HOOK_READMES[kind] ?? '', created);
  }
  await mkdir(paths.inbox, { recursive: true });
  await writeNew(path.join(paths.inbox, '.gitkeep'), '', created);
  await writeNew(path.join(dataDir, '.gitignore'), '# agent-kernel: live state and logs stay out of the repo\ntmp/\nsystem/logs/\n', created);

  let gitInitialized = false;
  if (!(await exists(path.join(dataDir, '.git')))) {
    try {
      await run('git', ['init', '-q', dataDir]);
      gitInitialized = true;
    } catch (error) {
      throw new KernelError('INTERNAL', `git init in ${dataDir} failed: ${(error as Error).message}. Is git installed?`, { cause: error });
    }
  }
  await registerInstance(name, dataDir, env);
  await ensureStateDirs(paths);
  return { name, dataDir, created, gitInitialized };
}
