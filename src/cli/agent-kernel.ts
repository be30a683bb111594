#!/usr/bin/env node
// The bin: its program is one bundled file (scripts/bundle.mjs), run with V8's code cache.
// `serve` first tries to bridge to the instance's running kernel, which needs almost none of it.
import { runBundle } from './run-bundle.js';

const bridged = process.argv[2] === 'serve' && (await (await import('./commands/agent-kernel/serve-bridge.js')).fastServe(process.argv.slice(3)));
if (bridged) process.exit();
else runBundle('agent-kernel', import.meta.url);
