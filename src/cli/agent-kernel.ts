#!/usr/bin/env node
// The bin: its program is one bundled file (scripts/bundle.mjs), run with V8's code cache.
import { runBundle } from './run-bundle.js';

runBundle('agent-kernel', import.meta.url);
