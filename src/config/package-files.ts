import { existsSync } from 'node:fs';
import path from 'node:path';
import { CodedError } from '../errors.js';
import { packageRoot } from '../util/package-root.js';

/**
 * The files of this package the runner hands to other programs: the built server bin
 * that Claude Code starts, the hook command, the default Containerfile. Found from the
 * package root, so they are the same whether the runner runs from dist/ or from src/ (tests).
 */
export function packageFiles(root: string = packageRoot()) {
  return {
    serverBin: path.join(root, 'dist', 'cli', 'agent-kernel.js'),
    runnerBin: path.join(root, 'dist', 'cli', 'kernel-runner.js'),
    hookCli: path.join(root, 'dist', 'cli', 'hook.js'),
    mcpTapCli: path.join(root, 'dist', 'cli', 'mcp-tap.js'),
    defaultContainerfile: path.join(root, 'assets', 'Containerfile.default'),
  };
}

/** The built files a tick needs; missing ones mean the package was not built. */
export function assertBuilt(files = packageFiles()): void {
  for (const file of [files.serverBin, files.hookCli, files.mcpTapCli]) {
    if (!existsSync(file)) {
      throw new CodedError('HARNESS_MISSING', `${file} is missing: build agent-kernel first (npm run build).`, { details: { file } });
    }
  }
}
