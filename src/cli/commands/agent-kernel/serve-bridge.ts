import { realpathSync } from 'node:fs';
import path from 'node:path';
import { bridgeStdio } from '../../../kernel/client/bridge.js';
import { type KernelLink, connectKernel } from '../../../kernel/client/session-link.js';
import { locateKernel } from '../../../kernel/client/locate.js';
import type { KernelClientKind } from '../../../kernel/protocol.js';
import { isWithin } from '../../../util/within.js';

/**
 * `agent-kernel serve NAME` (stdio) when the instance's kernel runs: a bridge to it. Tried
 * first, from a bundle of its own (scripts/bundle.mjs) before the rest of agent-kernel is
 * loaded, so that a tick's login costs little more than starting Node; anything this cannot
 * settle cheaply falls through to the full command.
 */

/** A tick's harness says so (kernel-runner's MCP config); everyone else is a person. */
export function clientKind(env: NodeJS.ProcessEnv = process.env): KernelClientKind {
  return env.AGENT_KERNEL_CLIENT === 'tick' ? 'tick' : 'person';
}

/** Bridge this process's stdio to the kernel session `link` until the client goes; the exit code. */
export function bridgeProcessStdio(link: KernelLink, socketPath: string, dataDir: string): Promise<number> {
  return bridgeStdio({
    socketPath,
    client: clientKind(),
    first: link,
    input: process.stdin,
    output: process.stdout,
    dataDir,
    note: (line) => process.stderr.write(`${line}\n`),
  });
}

/**
 * `serve <target>` with nothing else on the line, and a kernel answering for it: bridged here,
 * and true once the bridge ended (process.exitCode set). false: run the full command.
 */
export async function fastServe(args: readonly string[]): Promise<boolean> {
  const [target, ...rest] = args;
  if (target === undefined || target.startsWith('-') || rest.length > 0) return false;
  let located;
  try {
    located = locateKernel(target);
  } catch {
    return false;
  }
  // A socket the container could have put there is never trusted: the full command refuses a state directory inside the data directory.
  if (!located || isWithin(path.dirname(located.socketPath), located.dataDir)) return false;
  let link: KernelLink;
  try {
    // Refuses a socket folder that is not this user's alone (0700).
    link = await connectKernel(located.socketPath, { client: clientKind() });
  } catch {
    // No kernel (or one that does not answer): the full command decides what to do.
    return false;
  }
  if (realpathOr(link.hello.dataDir) !== realpathOr(located.dataDir)) {
    link.socket.destroy();
    return false;
  }
  process.exitCode = await bridgeProcessStdio(link, located.socketPath, link.hello.dataDir);
  return true;
}

function realpathOr(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}
