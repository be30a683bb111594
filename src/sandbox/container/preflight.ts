import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describeIgnored } from '../../config/operator-config.js';
import { describeBoundary, engineBoundary, instanceBoundary } from './user-namespace.js';
import type { Instance } from '../../config/instance.js';
import { describeError, isCodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { DEFAULT_BASE_IMAGE } from '../engine/bootstrap.js';
import { egressStatus, ensureEgressImage } from '../egress/proxy.js';
import { podmanCheck } from '../engine/engine-traps.js';
import { type Engine, connectEngine, describeEngine, engineCandidates, engineSetting, isRemoteEngine } from '../engine/engine.js';
import { remoteEngineRows } from './remote-rows.js';
import { CONTAINER_ULIMITS } from '../engine/ulimits.js';
import { LABEL, type ProgressCallback, baseImages, buildContext, imageExists, readContainerfile } from '../engine/image.js';
import { ensureImage } from './instance-image.js';

/**
 * The checks behind `agent-kernel doctor`: each row says what was checked, what was found
 * and, when it failed, how to fix it. `not-ready` means a set-up step is missing (exit 3);
 * `failed` means something is broken (exit 4).
 */
export type CheckStatus = 'ok' | 'not-ready' | 'failed' | 'skipped';

export interface CheckRow {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
  /** What doctor prints in the first column instead of the status's own word (PAUSED). */
  mark?: string;
}

export interface PreflightOptions {
  logger: Logger;
  onProgress?: ProgressCallback | undefined;
  /** The harness binary to look for (default `claude`). */
  harnessCommand?: string;
}

export const MIN_TMUX = [3, 2] as const;

/** Pure: "tmux 3.3a" → [3, 3]; undefined when it is not a tmux version line. */
export function parseTmuxVersion(text: string): [number, number] | undefined {
  const match = /tmux (?:next-)?(\d+)\.(\d+)/.exec(text);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

export function tmuxVersionOk(version: readonly [number, number]): boolean {
  return version[0] > MIN_TMUX[0] || (version[0] === MIN_TMUX[0] && version[1] >= MIN_TMUX[1]);
}

/** Run argv in a throw-away, locked-down container of `image`; returns its combined output and exit code. */
export async function runInImage(engine: Engine, image: string, instanceName: string, argv: string[]): Promise<{ exitCode: number; output: string }> {
  const container = await engine.docker.createContainer({
    name: `agent-kernel-${instanceName}-check-${randomBytes(3).toString('hex')}`,
    Image: image,
    Cmd: argv,
    Labels: { [LABEL.instance]: instanceName },
    HostConfig: {
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: 64,
      Ulimits: CONTAINER_ULIMITS,
    },
  });
  try {
    await container.start();
    const result = (await container.wait()) as { StatusCode: number };
    const logs = await container.logs({ stdout: true, stderr: true, follow: false });
    // Non-TTY logs are multiplexed: strip the 8-byte frame headers.
    const buffer = Buffer.isBuffer(logs) ? logs : Buffer.from(String(logs));
    const parts: Buffer[] = [];
    for (let offset = 0; offset + 8 <= buffer.length; ) {
      const size = buffer.readUInt32BE(offset + 4);
      parts.push(buffer.subarray(offset + 8, offset + 8 + size));
      offset += 8 + size;
    }
    return { exitCode: result.StatusCode, output: Buffer.concat(parts).toString('utf8') };
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

function commandVersion(command: string, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, ['--version'], { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error) reject(error);
      else resolve((stdout || stderr).trim().split('\n')[0] ?? '');
    });
  });
}

async function checkDataDir(instance: Instance): Promise<CheckRow> {
  const probe = path.join(instance.paths.privateState, `.doctor-${process.pid}`);
  try {
    await mkdir(path.dirname(probe), { recursive: true });
    await writeFile(probe, 'ok');
    await rm(probe, { force: true });
    return { name: 'data dir', status: 'ok', detail: `${instance.dataDir} is writable` };
  } catch (error) {
    return {
      name: 'data dir',
      status: 'failed',
      detail: `${instance.dataDir} is not writable: ${describeError(error)}`,
      fix: `give this user write access: chown -R $(id -u) ${instance.dataDir}`,
    };
  }
}

/** The policy, what it allows, and for allowlist whether the proxy image builds and the proxy runs. */
async function checkNetwork(engine: Engine, instance: Instance, options: PreflightOptions): Promise<CheckRow> {
  const policy = instance.config.container.network;
  if (policy === 'none') return { name: 'network', status: 'ok', detail: 'none: the container has no network' };
  if (policy === 'open') return { name: 'network', status: 'ok', detail: 'open: the container reaches whatever the engine\'s bridge reaches (container.network "allowlist" limits it)' };
  try {
    const image = await ensureEgressImage(engine, { logger: options.logger, onProgress: options.onProgress });
    const status = await egressStatus(engine, instance);
    return {
      name: 'network',
      status: 'ok',
      detail: `allowlist: ${status.allowed.length} destination${status.allowed.length === 1 ? '' : 's'} allowed (${status.allowed.join(', ') || 'none'}); proxy ${image} ${status.proxyRunning ? 'running' : 'not running (it starts with the container)'}`,
    };
  } catch (error) {
    return { name: 'network', status: 'failed', detail: `allowlist: ${describeError(error)}`, fix: `see the engine's log; agent-kernel doctor ${instance.name} --verbose shows the build` };
  }
}

async function checkHarness(command: string): Promise<CheckRow> {
  try {
    const version = await commandVersion(command);
    return { name: 'claude code', status: 'ok', detail: `${command} --version: ${version}` };
  } catch (error) {
    return {
      name: 'claude code',
      status: 'not-ready',
      detail: `${command} --version failed: ${describeError(error).split('\n')[0]}`,
      fix: 'npm run setup puts the pinned Claude Code on PATH as claude (open a new login shell after it); or npm install -g @anthropic-ai/claude-code; or set runner.command in the operator\'s configuration (agent-kernel config <name>)',
    };
  }
}

/**
 * Run every check for an instance (or, without one, the machine-wide ones). Never throws for
 * a failing check: it becomes a row. Later rows that depend on a failed one are skipped.
 */
export async function preflight(instance: Instance | undefined, options: PreflightOptions): Promise<CheckRow[]> {
  const rows: CheckRow[] = [];
  const skip = (name: string, why: string): void => void rows.push({ name, status: 'skipped', detail: why });

  const setting = instance ? engineSetting(instance.config.container) : undefined;
  const remote = engineCandidates(setting).find((address) => isRemoteEngine({ address }));
  const checked = remote === undefined ? await localEngineRows(setting) : await remoteEngineRows(remote, { instance });
  const engine = checked.engine;
  rows.push(...checked.rows);
  if (engine) rows.push(await boundaryRow(engine, instance));

  if (instance) rows.push(configurationRow(instance));
  let bases = [DEFAULT_BASE_IMAGE];
  if (instance) {
    try {
      const context = await buildContext(instance);
      bases = baseImages(await readContainerfile(context));
    } catch (error) {
      rows.push({ name: 'containerfile', status: 'failed', detail: describeError(error), fix: `check ${instance.paths.containerfile}` });
    }
  }
  let basesOk = false;
  if (engine) {
    const missing: string[] = [];
    for (const base of bases) if (!(await imageExists(engine, base))) missing.push(base);
    basesOk = missing.length === 0;
    rows.push(
      basesOk
        ? { name: 'base image', status: 'ok', detail: bases.join(', ') + ' present' }
        : { name: 'base image', status: 'not-ready', detail: `${missing.join(', ')} not on the engine`, fix: missing.map((m) => `agent-kernel image bootstrap ${m}`).join('; ') },
    );
  } else skip('base image', 'no engine');

  if (instance) {
    let imageTag: string | undefined;
    if (engine && basesOk) {
      try {
        imageTag = (await ensureImage(engine, instance, { logger: options.logger, onProgress: options.onProgress })).tag;
        rows.push({ name: 'image', status: 'ok', detail: `${imageTag} built` });
      } catch (error) {
        rows.push({
          name: 'image',
          status: isCodedError(error, 'BASE_IMAGE_MISSING') ? 'not-ready' : 'failed',
          detail: describeError(error),
          fix: `fix ${instance.paths.containerfile} (or remove it to use the built-in one), then: agent-kernel container rebuild ${instance.name}`,
        });
      }
    } else skip('image', engine ? 'base image missing' : 'no engine');

    if (engine && imageTag) {
      try {
        const { output } = await runInImage(engine, imageTag, instance.name, ['sh', '-c', 'if command -v tmux >/dev/null; then tmux -V; else echo tmux: not installed; fi']);
        const version = parseTmuxVersion(output);
        rows.push(
          version && tmuxVersionOk(version)
            ? { name: 'tmux', status: 'ok', detail: `${output.trim()} in the image` }
            : {
                name: 'tmux',
                status: 'failed',
                detail: version ? `${output.trim()} in the image; ${MIN_TMUX.join('.')} or newer is needed` : `no tmux in the image (${output.trim() || 'no output'})`,
                fix: `install tmux >= ${MIN_TMUX.join('.')} in ${instance.paths.containerfile} (Debian bookworm has 3.3a), then: agent-kernel container rebuild ${instance.name}`,
              },
        );
      } catch (error) {
        rows.push({ name: 'tmux', status: 'failed', detail: `could not run the image: ${describeError(error)}`, fix: 'see the engine log; agent-kernel container rebuild <name>' });
      }
    } else skip('tmux', 'no image');

    rows.push(engine && basesOk ? await checkNetwork(engine, instance, options) : { name: 'network', status: 'skipped', detail: `${instance.config.container.network}; ${engine ? 'base image missing' : 'no engine'}` });
    rows.push(await checkDataDir(instance));
  }

  rows.push(await checkHarness(options.harnessCommand ?? 'claude'));
  return rows;
}

/** The engine on this machine's socket: its version (and Podman's traps), or why none answered and how to start one. */
async function localEngineRows(setting: string | undefined): Promise<{ rows: CheckRow[]; engine?: Engine }> {
  try {
    const engine = await connectEngine({ socket: setting });
    const rows: CheckRow[] = [{ name: 'engine', status: 'ok', detail: describeEngine(engine) }];
    if (engine.name === 'podman') rows.push({ name: 'podman', ...podmanCheck(await engine.docker.info(), (await engineBoundary(engine)).kind === 'rootless') });
    return { rows, engine };
  } catch (error) {
    const row: CheckRow = {
      name: 'engine',
      status: 'not-ready',
      detail: isCodedError(error, 'ENGINE_UNREACHABLE')
        ? `nothing answered: ${((error.details.tried ?? []) as { address: string; error: string }[]).map((t) => `${t.address} (${t.error})`).join('; ')}`
        : describeError(error),
      fix: 'npm run setup (installs and starts dockerd), or sudo dockerd &, or systemctl start docker, or podman system service --time=0 unix://$XDG_RUNTIME_DIR/podman/podman.sock &',
    };
    return { rows: [row] };
  }
}

/** Where the configuration comes from, and what of the agent's file was ignored (operator-config.ts). */
function configurationRow(instance: Instance): CheckRow {
  const ignored = instance.ignoredConfig ?? [];
  if (ignored.length === 0) return { name: 'configuration', status: 'ok', detail: `host effect from ${instance.paths.operatorConfig}; the agent tunes system/agent_config.json` };
  return { name: 'configuration', status: 'not-ready', detail: describeIgnored(ignored, instance), fix: `agent-kernel config ${instance.name} (then --adopt, or edit ${instance.paths.operatorConfig})` };
}

/** Defence in depth: the layer under the hardening (user-namespace.ts). Not a failure when there is none (the hardening holds), but said plainly with the way to one. */
async function boundaryRow(engine: Engine, instance: Instance | undefined): Promise<CheckRow> {
  const boundary = await engineBoundary(engine).catch(() => undefined);
  if (!boundary) return { name: 'boundary', status: 'ok', detail: 'unknown (the engine did not say)' };
  let kind = boundary.kind;
  if (instance) {
    try {
      kind = instanceBoundary(instance.config.container, boundary);
      if (kind === 'gvisor' && !boundary.runtimes.includes('runsc')) {
        return { name: 'boundary', status: 'failed', detail: 'container.boundary is "gvisor" but the engine has no runsc runtime', fix: 'apt-get install runsc, then start dockerd with --add-runtime runsc=/usr/bin/runsc (or remove container.boundary)' };
      }
    } catch (error) {
      return { name: 'boundary', status: 'failed', detail: describeError(error) };
    }
  }
  const detail = describeBoundary(kind, boundary.hostIds);
  if (kind !== 'none') return { name: 'boundary', status: 'ok', detail };
  const how = boundary.kind === 'userns-remap' ? 'remove container.boundary "none" to get the engine\'s userns-remap back' : 'start dockerd with --userns-remap=default (what npm run setup does when it starts the engine), or run rootless Podman, or set container.boundary "gvisor" with runsc installed (see docs/security.md, The second boundary)';
  return { name: 'boundary', status: 'ok', detail: `${detail}. For a second boundary: ${how}` };
}
