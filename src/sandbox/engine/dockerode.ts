import Module, { createRequire } from 'node:module';
import type DockerodeClass from 'dockerode';

const require = createRequire(import.meta.url);

type AnyFunction = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Put a stand-in for a CommonJS module that exports one function into require's cache: the
 * real module loads on the first call. A module already loaded, or one that moved (another
 * version of the package), is left to load as usual.
 */
function deferFunctionModule(resolve: () => string): void {
  let file: string;
  try {
    file = resolve();
  } catch {
    return;
  }
  if (require.cache[file]) return;
  let real: AnyFunction | undefined;
  const standIn = new Module(file);
  standIn.filename = file;
  standIn.loaded = true;
  standIn.exports = function (this: unknown, ...args: unknown[]): unknown {
    if (!real) {
      if (require.cache[file] === standIn) delete require.cache[file];
      real = require(file) as AnyFunction;
    }
    return real.apply(this, args);
  };
  require.cache[file] = standIn;
}

// dockerode and docker-modem load gRPC with protobuf (BuildKit sessions, which we never open)
// and ssh2 (ssh:// engines only) up front: about 230 ms of CPU and 15 MB on every server start.
deferFunctionModule(() => require.resolve('dockerode/lib/session.js'));
deferFunctionModule(() => createRequire(require.resolve('dockerode')).resolve('docker-modem/lib/ssh.js'));

/** dockerode's class, without loading what only BuildKit sessions and ssh:// engines use until they are used. */
export const DockerodeClient = require('dockerode') as typeof DockerodeClass;
