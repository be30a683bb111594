import path from 'node:path';
import { secretsPath } from '../../config/paths.js';
import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import type { CredentialsContext, McpServerSpec } from '../harnesses/harness.js';
import { MCP_CONNECT_TIMEOUT_MS, mcpFailureMessage } from './mcp-handshake.js';
import { TapLog, tappedServer } from './mcp-tap.js';

/**
 * For a harness the runner cannot ask (harness.mcpStatus `tap`): whether our MCP server
 * connected, read from the tap between the harness and the server. "Connected" means the
 * harness listed our five tools; a harness that has not within MCP_CONNECT_TIMEOUT_MS, whose
 * server exited first, or that ends without ever listing them, ran a tick with no tools: a failed tick.
 */
export class McpTapCheck {
  private readonly log: TapLog;
  private readonly startedAt = Date.now();
  private announced = false;

  constructor(workDir: string, private readonly tapCli: string) {
    this.log = new TapLog(path.join(workDir, 'mcp-tap.jsonl'));
  }

  /** Our server as the harness must start it: behind the tap. */
  wrap(server: McpServerSpec): McpServerSpec {
    return tappedServer(server, this.tapCli, this.log.file);
  }

  /** While the harness runs: a reason to end it (our server did not connect), and when the agent last used a tool. */
  check(now: number, instance: Instance, logger: Logger, marker: (fields: Record<string, unknown>) => void): { failed?: string; activityAt?: number } {
    const state = this.log.read();
    if (state.connected) {
      if (!this.announced) {
        this.announced = true;
        logger.info('MCP server connected');
        marker({ event: 'mcp-connected', via: 'tap' });
      }
      return state.lastActivityAt === undefined ? {} : { activityAt: state.lastActivityAt };
    }
    const failed = this.failure(instance);
    if (failed) return { failed };
    if (now - this.startedAt > MCP_CONNECT_TIMEOUT_MS) return { failed: mcpFailureMessage(instance, `no tools listed after ${MCP_CONNECT_TIMEOUT_MS / 1000} s`) };
    return {};
  }

  /** Once the harness exited by itself: why the tick had no tools, if it had none (a connection since the last check is announced). */
  afterExit(instance: Instance, logger: Logger, marker: (fields: Record<string, unknown>) => void): string | undefined {
    if (this.log.read().connected) {
      this.check(Date.now(), instance, logger, marker);
      return undefined;
    }
    return this.failure(instance) ?? mcpFailureMessage(instance, 'the harness ended without listing its tools');
  }

  private failure(instance: Instance): string | undefined {
    const state = this.log.read();
    if (state.listed) return mcpFailureMessage(instance, `it listed only ${state.listed.join(', ') || 'no tools'}`);
    if (state.serverExited) return mcpFailureMessage(instance, `the server exited (code ${state.serverExited.code ?? state.serverExited.signal})`);
    return undefined;
  }
}

/** Where the operator gives this instance's harness credentials. */
export function credentialsContext(instance: Instance, env: NodeJS.ProcessEnv): CredentialsContext {
  return {
    name: instance.name,
    secretsDir: secretsPath(instance.name, instance.config.runner.secrets_dir, env),
    home: instance.paths.harnessHome,
    operatorConfig: instance.paths.operatorConfig,
    paused: instance.paths.paused,
    model: instance.config.runner.model ?? instance.config.model,
  };
}
