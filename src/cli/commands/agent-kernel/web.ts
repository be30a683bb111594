import path from 'node:path';
import { configHome } from '../../../config/registry.js';
import { CodedError } from '../../../errors.js';
import { resolveToken } from '../../../server/http-auth.js';
import { gatherStatus } from '../../../runner/watch/service/status-view.js';
import { startWebServer } from '../../../web/web-server.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, out, err } from '../command.js';

const USAGE = 'web [--port P] [--host H] [--write] [--token-file FILE]';
const DEFAULT_PORT = 8766;

export const webCommand: Command = {
  name: 'web',
  summary: 'Serve a page on loopback showing every instance: terminals live, tick history, transcripts, recordings, events, mail (with --write: type into terminals, withdraw queued messages).',
  usage: USAGE,
  options: [
    ["--port P", "the port (default 8766)"],
    ["--host H", "the address to bind (default 127.0.0.1)"],
    ["--write", "let a person type into full-size terminals"],
    ["--token-file FILE", "the token (default: AGENT_KERNEL_TOKEN, else a generated one)"],
  ],
  examples: [
    "agent-kernel web   # then open the URL it prints",
  ],
  async run(args) {
    const usage = `agent-kernel ${USAGE}`;
    const { values } = parseCommandArgs(args, {
      usage,
      options: { port: { type: 'string' }, host: { type: 'string' }, write: { type: 'boolean' }, 'token-file': { type: 'string' } },
    });
    const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(usage, `--port wants a port number such as ${DEFAULT_PORT}; got ${JSON.stringify(values.port)}.`);
    const host = values.host ?? '127.0.0.1';
    if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
      throw new CodedError('USAGE', `The web view serves loopback only (127.0.0.1, ::1): it shows every agent's terminals. Got --host ${host}; use an SSH tunnel to look from elsewhere.`);
    }
    const token = await resolveToken({
      env: process.env,
      ...(values['token-file'] === undefined ? {} : { tokenFile: values['token-file'] }),
      defaultFile: path.join(configHome(), 'tokens', 'web.token'),
    });
    const server = await startWebServer({ status: () => gatherStatus(undefined), token: token.token, write: values.write === true, host, port });
    out(`${server.url}?token=${encodeURIComponent(token.token)}\n`);
    err(
      `agent-kernel web: open the URL above (token from ${token.source}); ${values.write ? 'people can TYPE into terminals (--write)' : 'read-only'}. Ctrl-C stops.\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await server.close();
    return EXIT.OK;
  },
};
