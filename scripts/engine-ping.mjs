// Exit 0 and print the engine when one answers (the same search as agent-kernel itself), else 1.
import { connectEngine, describeEngine } from '../dist/sandbox/engine.js';

try {
  const engine = await connectEngine({ timeoutMs: 2000 });
  console.log(describeEngine(engine));
  process.exit(0);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
