// tsc does not keep the executable bit: make the two bins runnable after a build.
import { chmodSync } from 'node:fs';
for (const bin of ['dist/cli/agent-kernel.js', 'dist/cli/kernel-runner.js']) chmodSync(bin, 0o755);
