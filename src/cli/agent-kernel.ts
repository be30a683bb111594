#!/usr/bin/env node
// The bin: its program is one bundled file (scripts/bundle.mjs), run with V8's code cache.
// `serve` first tries to bridge to the instance's running kernel, from a bundle of its own that
// holds nothing else (the bridge, the kernel's socket, the registry): a tick's login pays for little more than Node.
import type { fastServe } from './commands/agent-kernel/serve-bridge.js';
import { runBundle } from './run-bundle.js';

const bridge = () => runBundle('serve-bridge', import.meta.url) as { fastServe: typeof fastServe };
if (process.argv[2] === 'serve' && (await bridge().fastServe(process.argv.slice(3)))) process.exit();
else runBundle('agent-kernel', import.meta.url);
