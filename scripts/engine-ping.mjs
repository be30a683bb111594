// Exit 0 and print the engine and its boundary when one answers (the same search as agent-kernel itself), else 1.
import { connectEngine, describeEngine } from '../dist/sandbox/engine/engine.js';
import { describeBoundary, engineBoundary } from '../dist/sandbox/container/user-namespace.js';

try {
  const engine = await connectEngine({ timeoutMs: 2000 });
  const boundary = await engineBoundary(engine).catch(() => undefined);
  console.log(`${describeEngine(engine)}; boundary ${boundary ? describeBoundary(boundary.kind, boundary.hostIds) : 'unknown'}`);
  process.exit(0);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
