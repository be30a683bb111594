import { resolveInstance } from '../../../config/instance.js';
import { CodedError } from '../../../errors.js';
import { createLogger, registerSecrets } from '../../../log/logger.js';
import type { Instance } from '../../../config/instance.js';
import type { Logger } from '../../../log/logger.js';
import type { McpServerDeps } from '../../../server/create-server.js';
import { chooseServeMode } from '../../../kernel/client/reach-kernel.js';
import { TerminalsRuntime } from '../../../server/terminals/runtime.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, err } from '../command.js';
import path from 'node:path';
import { configHome } from '../../../config/registry.js';
import { bridgeProcessStdio, clientKind } from './serve-bridge.js';

export interface ServeArgs {
  target: string;
  http?: { host: string; port: number };
  tokenFile?: string;
  logLevel?: string;
}

const USAGE = 'serve <name-or-dir> [--http [host:]port] [--token-file FILE] [--log-level LEVEL]';

/** Pure: "8080", "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:0" → host and port (host 127.0.0.1 by default). */
export function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || !Number.isInteger(port) || port > 65535) {
    throw new CodedError('USAGE', `--http wants [host:]port, such as 8765 or 127.0.0.1:8765; got ${JSON.stringify(text)}.`);
  }
  const host = (match[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

/** Pure: the command line of `serve`. */
export function parseServeArgs(args: readonly string[]): ServeArgs {
  const { values, positionals } = parseCommandArgs(args, {
    usage: `agent-kernel ${USAGE}`,
    options: { http: { type: 'string' }, 'token-file': { type: 'string' }, 'log-level': { type: 'string' } },
    positionals: { min: 1, max: 1 },
    missing: 'Which instance?',
  });
  if (values['token-file'] !== undefined && values.http === undefined) throw new CodedError('USAGE', '--token-file only applies with --http.');
  return {
    target: positionals[0] as string,
    ...(values.http === undefined ? {} : { http: parseListen(values.http) }),
    ...(values['token-file'] === undefined ? {} : { tokenFile: values['token-file'] }),
    ...(values['log-level'] === undefined ? {} : { logLevel: values['log-level'] }),
  };
}

function onceSignalled(): Promise<string> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals) => resolve(signal);
    process.once('SIGINT', handler);
    process.once('SIGTERM', handler);
    process.once('SIGHUP', handler);
  });
}

interface Transport {
  stop: () => Promise<void>;
  /** Resolves with why the server should stop (a signal, or the client went away). */
  stopped: Promise<string>;
}

/** What serves the sessions: this process on its own terminals, or the instance's kernel (HTTP only: stdio bridges before). */
type Sessions = { kind: 'alone'; deps: McpServerDeps } | { kind: 'kernel'; socketPath: string; dataDir: string; logger: Logger; instance: Instance };

/**
 * MCP over stdio, or Streamable HTTP with its token, each loaded only when chosen; and the
 * container and terminals started in the background (login awaits them).
 */
async function openTransport(options: ServeArgs, sessions: Sessions): Promise<Transport> {
  const { instance, logger } = sessions.kind === 'alone' ? sessions.deps : sessions;
  if (options.http) {
    const [{ resolveToken, TOKEN_ENV }, { startHttpServer }, { kernelSessions }] = await Promise.all([
      import('../../../server/http-auth.js'),
      import('../../../server/http.js'),
      import('../../../kernel/client/kernel-relay.js'),
    ]);
    const token = await resolveToken({
      env: process.env,
      ...(options.tokenFile === undefined ? {} : { tokenFile: options.tokenFile }),
      // Outside the data directory: the agent's container sees everything in it.
      defaultFile: path.join(configHome(), 'tokens', `${instance.name}.token`),
    });
    registerSecrets(logger, [token.token]);
    const hint = `The token is in ${token.source}.`;
    const listen = { logger, host: options.http.host, port: options.http.port, token: token.token, tokenHint: hint };
    const running = await startHttpServer(sessions.kind === 'alone' ? { ...sessions.deps, ...listen } : { ...listen, backend: kernelSessions(sessions, logger) });
    if (token.generated) {
      err(`agent-kernel: generated an HTTP bearer token, stored in ${token.source} (mode 0600); shown once:\n${token.token}\n`);
    }
    const through = sessions.kind === 'kernel' ? ` through its kernel (${sessions.socketPath})` : '';
    err(`agent-kernel: serving ${instance.name}${through} at ${running.url} (token: ${token.source}; env ${TOKEN_ENV} overrides)\n`);
    // After listening: a taken port or a bad token file fails before the container is touched.
    if (sessions.kind === 'alone') sessions.deps.runtime.warmUp();
    return { stop: () => running.close(), stopped: onceSignalled() };
  }
  if (sessions.kind === 'kernel') throw new Error('stdio through a kernel is a bridge (bridgeProcessStdio)');
  // First: the engine and tmux round trips of start-up overlap with loading the MCP SDK.
  sessions.deps.runtime.warmUp();
  const { serveStdio } = await import('../../../server/stdio.js');
  const stdio = await serveStdio(sessions.deps);
  return { stop: () => stdio.close(), stopped: Promise.race([onceSignalled(), stdio.closed.then(() => 'stdin closed')]) };
}

export const serveCommand: Command = {
  name: 'serve',
  summary: "Serve the MCP tools (login, open, type, wait, close) over stdio, or Streamable HTTP with --http; through the instance's kernel when one runs.",
  usage: USAGE,
  options: [
    ["--http [host:]port", "serve Streamable HTTP on /mcp instead of stdio (loopback unless a host is given)"],
    ["--token-file FILE", "the bearer token for --http (default: AGENT_KERNEL_TOKEN, else a generated one)"],
    ["--log-level LEVEL", "debug, info, warn or error"],
  ],
  examples: [
    "claude mcp add --scope user agent-kernel -- agent-kernel serve demo   # Claude Code starts it, from any folder",
    "agent-kernel serve demo --http 8765                                   # one server for several clients",
  ],
  async run(args) {
    const options = parseServeArgs(args);
    const instance = await resolveInstance(options.target);
    const logger = createLogger({ process: 'server', logDir: instance.paths.logs, ...(options.logLevel ? { level: options.logLevel } : {}) });
    logger.info({ instance: instance.name, dataDir: instance.dataDir, transport: options.http ? 'http' : 'stdio' }, 'agent-kernel serve starting');
    // A bug in a callback must not take the terminals away from the agent mid-tick: log it and serve on.
    process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection (the server keeps running)'));
    process.on('uncaughtException', (error) => logger.fatal({ err: error }, 'uncaught exception (the server keeps running)'));
    // The instance's kernel, when one runs, owns the terminals: connect to it instead of starting them here.
    const mode = await chooseServeMode(instance, logger, clientKind());
    if (mode.kind === 'kernel' && !options.http) {
      logger.info({ socket: mode.socketPath, kernelPid: mode.link.hello.pid }, 'bridging stdio to the kernel');
      const code = await bridgeProcessStdio(mode.link, mode.socketPath, mode.link.hello.dataDir);
      setImmediate(() => process.exit(code));
      return code;
    }
    if (mode.kind === 'kernel') mode.link.socket.destroy();
    // AGENT_KERNEL_HOST_TMUX=0: on the host backend, PTYs of the server even where tmux is installed.
    const terminalOptions = { hostTmux: process.env.AGENT_KERNEL_HOST_TMUX !== '0', ...(mode.kind === 'alone' && mode.lock ? { lock: mode.lock } : {}) };
    const runtime =
      mode.kind === 'alone'
        ? new TerminalsRuntime(async () => (await import('../../../server/terminals/start-terminals.js')).startTerminals(instance, logger, terminalOptions), logger)
        : undefined;
    const sessions: Sessions =
      mode.kind === 'kernel' ? { kind: 'kernel', socketPath: mode.socketPath, dataDir: mode.link.hello.dataDir, logger, instance } : { kind: 'alone', deps: { runtime: runtime as TerminalsRuntime, instance, logger } };
    const { stop, stopped } = await openTransport(options, sessions);

    const why = await stopped;
    logger.info({ why }, 'shutting down');
    // A second signal while we shut down means: now.
    const force = () => process.exit(EXIT.FAILED);
    process.once('SIGINT', force);
    process.once('SIGTERM', force);
    await stop().catch((error: unknown) => logger.error({ err: error }, 'closing the transport failed'));
    await runtime?.dispose().catch((error: unknown) => logger.error({ err: error }, 'detaching from the terminals failed'));
    if (mode.kind === 'alone') await mode.lock?.release();
    logger.info(runtime ? 'stopped; the terminals live on in tmux' : 'stopped');
    // Nothing is left to wait for; leave even if a library holds a handle open.
    setImmediate(() => process.exit(EXIT.OK));
    return EXIT.OK;
  },
};
