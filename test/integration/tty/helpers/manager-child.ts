import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
/** Plain JS on the built dist/ (npm test builds before vitest runs). */
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'tty', 'manager-child.mjs');

export interface ManagerChild {
  pid: number;
  call<T>(op: 'open' | 'type' | 'wait', ...args: unknown[]): Promise<T>;
  kill(): Promise<void>;
}

/** A separate server process running a TtyManager on the instance. */
export async function startManagerChild(name: string, dataDir: string): Promise<ManagerChild> {
  const child: ChildProcess = spawn(process.execPath, [FIXTURE, name, dataDir], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const { value, done } = await lines.next();
    if (done) throw new Error('the manager child ended');
    return JSON.parse(value as string) as Record<string, unknown>;
  };
  const hello = await next();
  if (!hello.ready) throw new Error(`manager child did not start: ${JSON.stringify(hello)}`);
  return {
    pid: child.pid!,
    async call<T>(op: string, ...args: unknown[]): Promise<T> {
      child.stdin!.write(`${JSON.stringify({ op, args })}\n`);
      const reply = await next();
      if ('error' in reply) throw new Error(String(reply.error));
      return reply.ok as T;
    },
    async kill() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
