import path from 'node:path';

/**
 * Variables with which the operator's shell points an agent CLI at a configuration elsewhere
 * (their own settings, plugins, MCP servers, hooks): a tick's harness reads only the private
 * one the runner writes, so these are dropped from its environment.
 */
const CONFIG_POINTERS = [
  'CLAUDE_CONFIG_DIR',
  'CODEX_HOME',
  'CODEX_SQLITE_HOME',
  'OPENCODE_CONFIG',
  'OPENCODE_CONFIG_DIR',
  'OPENCODE_CONFIG_CONTENT',
  'OPENCODE_TUI_CONFIG',
  'OPENCODE_PERMISSION',
  'OPENCODE_DB',
  'GEMINI_CLI_HOME',
  'GEMINI_CLI_SYSTEM_SETTINGS_PATH',
  'GEMINI_CLI_SYSTEM_DEFAULTS_PATH',
] as const;

/** The XDG base folders inside a private home, as the CLIs lay them out under ~. */
export function xdgDirs(home: string) {
  return {
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
  };
}

/** The harness's temp folder, inside its private home. */
export function privateTmp(home: string): string {
  return path.join(home, 'tmp');
}

/**
 * Pure: the environment of an agent CLI run by a tick. HOME and the XDG folders are the
 * harness's private home (host-private state: its settings, logins and sessions; never the
 * operator's ~/.config, whose plugins, MCP servers and hooks are not meant for an agent that
 * reads untrusted text), PWD is the folder it runs in (opencode takes its project from PWD,
 * and the operator's PWD may be the data directory), and variables that point it at another
 * configuration are dropped. Credentials (API keys, tokens) pass through from `base`.
 */
export function privateHarnessEnv(base: NodeJS.ProcessEnv, where: { home: string; cwd: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const name of CONFIG_POINTERS) delete env[name];
  // Their temp files (Gemini CLI's error reports, caches) stay host-private too.
  return { ...env, HOME: where.home, ...xdgDirs(where.home), TMPDIR: privateTmp(where.home), PWD: where.cwd };
}
