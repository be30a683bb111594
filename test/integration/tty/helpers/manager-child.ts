import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'tty', 'manager-child.ts');
/** Under the repo (bare imports resolve to our node_modules), two levels deep like src/x/ (import.meta.url paths hold). */
const OUT = path.join(ROOT, 'node_modules', '.agent-kernel-tests', 'manager-child.mjs');

let bundled: Promise<string> | undefined;

/** The fixture as one runnable file (Node 20 cannot run TypeScript itself). */
function bundle(): Promise<string> {
  bundled ??= (async () => {
    await mkdir(path.dirname(OUT), { recursive: true });
    await build({
      input: FIXTURE,
      platform: 'node',
      external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
      output: { file: OUT, format: 'esm' },
      logLevel: 'silent',
    });
    return OUT;
  })();
  return bundled;
}

export interface ManagerChild {
  pid: number;
  call<T>(op: 'open' | 'type' | 'wait', ...args: unknown[]): Promise<T>;
  kill(): Promise<void>;
}

/** A separate server process running a TtyManager on the instance. */
export async function startManagerChild(name: string, dataDir: string): Promise<ManagerChild> {
  const file = await bundle();
  const child: ChildProcess = spawn(process.execPath, [file, name, dataDir], { stdio: ['pipe', 'pipe', 'inherit'] });
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
