import { resolveInstance } from '../../../config/instance.js';
import { CodedError } from '../../../errors.js';
import { createLogger, registerSecrets } from '../../../log/logger.js';
import type { Instance } from '../../../config/instance.js';
import type { Logger } from '../../../log/logger.js';
import { type KernelForServe, kernelForServe } from '../../../kernel/host/kernel-for-serve.js';
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

/** Streamable HTTP with its token, each HTTP session a lasting session on the kernel's socket. */
async function serveHttp(listenOn: { host: string; port: number }, options: ServeArgs, kernel: KernelForServe, instance: Instance, logger: Logger): Promise<() => Promise<void>> {
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
  const running = await startHttpServer({ logger, host: listenOn.host, port: listenOn.port, token: token.token, tokenHint: hint, backend: kernelSessions(kernel, logger) });
  if (token.generated) {
    err(`agent-kernel: generated an HTTP bearer token, stored in ${token.source} (mode 0600); shown once:\n${token.token}\n`);
  }
  const through = kernel.hosted ? '' : ` through its kernel (${kernel.socketPath})`;
  err(`agent-kernel: serving ${instance.name}${through} at ${running.url} (token: ${token.source}; env ${TOKEN_ENV} overrides)\n`);
  return () => running.close();
}

export const serveCommand: Command = {
  name: 'serve',
  summary: "Serve the MCP tools (login, open, type, wait, close) over stdio, or Streamable HTTP with --http; through the instance's kernel, hosted in this process when none runs.",
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
    // Two paths: the instance's kernel when one runs, else one hosted here; either way reached through its socket.
    // AGENT_KERNEL_HOST_TMUX=0: on the host backend, PTYs of the server even where tmux is installed.
    const kernel = await kernelForServe(instance, logger, { client: clientKind(), hostTmux: process.env.AGENT_KERNEL_HOST_TMUX !== '0' });
    logger.info({ socket: kernel.socketPath, kernelPid: kernel.link.hello.pid, hosted: kernel.hosted }, kernel.hosted ? 'hosting the kernel in this process' : 'serving through the running kernel');
    let code: number = EXIT.OK;
    let why: string;
    let stop = () => Promise.resolve();
    if (options.http) {
      kernel.link.socket.destroy();
      stop = await serveHttp(options.http, options, kernel, instance, logger);
      why = await onceSignalled();
    } else {
      const bridged = bridgeProcessStdio(kernel.link, kernel.socketPath, kernel.dataDir).then((exit) => {
        code = exit;
        return 'the client went away';
      });
      why = await Promise.race([bridged, onceSignalled()]);
    }
    logger.info({ why }, 'shutting down');
    // A second signal while we shut down means: now.
    const force = () => process.exit(EXIT.FAILED);
    process.once('SIGINT', force);
    process.once('SIGTERM', force);
    await stop().catch((error: unknown) => logger.error({ err: error }, 'closing the transport failed'));
    await kernel.close(why).catch((error: unknown) => logger.error({ err: error }, 'stopping the hosted kernel failed'));
    logger.info(kernel.hosted ? 'stopped; the terminals live on in tmux' : 'stopped');
    // Nothing is left to wait for; leave even if a library holds a handle open.
    setImmediate(() => process.exit(code));
    return code;
  },
};
