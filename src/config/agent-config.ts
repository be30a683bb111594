import { z } from 'zod';
import { DEFAULT_ALLOW, parseAllowEntry } from './egress-allow.js';
import { parseDuration, parseWith } from './parse.js';

/**
 * Everything an instance can be told: the shape of the operator's file and of the agent's
 * `<data>/system/agent_config.json` (operator-config.ts decides which file may set what).
 * Unknown keys are errors (a typo must not be silently ignored). Durations are strings
 * ("30s", "10m", "2h") and come out of parsing as milliseconds.
 */

const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/**
 * Capabilities an instance may add back after all are dropped. The default set is what
 * a root user inside the container needs to install packages and manage its own files
 * and processes; anything that reaches the host (SYS_ADMIN, NET_ADMIN, SYS_PTRACE...) is refused.
 */
export const ALLOWED_CAPABILITIES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'NET_BIND_SERVICE',
  'SYS_CHROOT',
  'AUDIT_WRITE',
  'MKNOD',
  'SETFCAP',
] as const;

export const DEFAULT_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID'] as const;

const mountSchema = z.strictObject({
  source: z.string().min(1),
  target: z.string().startsWith('/').describe('absolute path inside the container'),
  read_only: z.boolean().default(false),
});

const containerSchema = z.strictObject({
  backend: z
    .enum(['docker', 'host'])
    .default('docker')
    .describe('docker: a hardened container (Docker or Podman); host: this machine, for a server already in a sandbox'),
  engine: z
    .string()
    .min(1)
    .optional()
    .describe(
      'the container engine: "docker" (its local socket), "podman" (Podman\'s socket: rootless for a user, /run/podman/podman.sock for root), or an address like DOCKER_HOST (unix:///path.sock, tcp://host:port, ssh://user@host); default: DOCKER_HOST, else the first local engine that answers',
    ),
  engine_socket: z.string().min(1).optional().describe('the former name of container.engine (an address); container.engine wins'),
  network: z
    .enum(['allowlist', 'none', 'open', 'bridge'])
    .default('allowlist')
    // "bridge" was the name of "open" before egress policies; existing configs keep working.
    .transform((policy) => (policy === 'bridge' ? 'open' : policy))
    .describe('allowlist: only container.allow is reachable, through a proxy; none: no network; open: everything the engine reaches ("bridge" is a deprecated name for it)'),
  allow: z
    .array(
      z.string().superRefine((text, ctx) => {
        try {
          parseAllowEntry(text);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
        }
      }),
    )
    .max(1000)
    .default([...DEFAULT_ALLOW])
    .describe('destinations an allowlist instance may reach: host, *.domain, IPv4 or CIDR, each with an optional :port (default 80 and 443) or :*'),
  boundary: z
    .enum(['engine', 'gvisor', 'none'])
    .default('engine')
    .describe(
      "the second boundary under the hardening. engine: what the engine gives (dockerd --userns-remap: container root is an unprivileged host uid); gvisor: the engine's runsc runtime (gVisor's kernel); none: container root is host root (turns the engine's remapping off for this container)",
    ),
  memory: z
    .string()
    .regex(/^\d+[kmg]?$/i, 'expected a size such as "512m" or "2g"')
    .default('2g'),
  cpus: z.number().positive().max(256).default(2),
  pids_limit: z.int().min(64).max(1_000_000).default(1024),
  cap_add: z.array(z.enum(ALLOWED_CAPABILITIES)).default([...DEFAULT_CAPABILITIES]),
  read_only_root: z.boolean().default(false).describe('mount the root filesystem read-only (tmpfs for /tmp and /run)'),
  privileged: z.boolean().default(false).describe('always refused; present so that asking for it gets a clear error'),
  mounts: z.array(mountSchema).default([]).describe('refused when not empty: only the data directory is ever mounted (hardening.ts says why)'),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).default({}),
  user: z.string().optional().describe('user[:group] the terminals run as inside the container (default root)'),
  base_images: z
    .array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/, 'expected an image reference as docker images lists it, such as "debian:bookworm-slim"'))
    .max(100)
    .default([])
    .describe("images the agent's own Containerfile may start from (FROM, COPY --from), besides the built-in Containerfile's base; never pulled"),
  build_timeout: duration
    .prefault('30m')
    .describe('longest an image build may take (the Containerfile is the agent\'s: a step may never end); past it the build is stopped and reported'),
});

const ttySchema = z.strictObject({
  cols: z.int().min(20).max(500).default(120),
  rows: z.int().min(5).max(200).default(40),
  max_ttys: z.int().min(1).max(20).default(20),
  settle_ms: z.int().min(100).max(30_000).default(1500).describe('silence that counts as "done" for programs without shell integration'),
  history_limit: z.int().min(1000).max(1_000_000).default(50_000).describe('lines tmux keeps per terminal'),
  max_text_bytes: z.int().min(256).max(1_048_576).default(16_384).describe('largest text one type() call may send'),
  raw_log_max_bytes: z.int().min(65_536).max(256 * 1024 * 1024).default(8 * 1024 * 1024),
  scrollback_max_bytes: z
    .int()
    .min(65_536)
    .max(1024 * 1024 * 1024)
    .default(16 * 1024 * 1024)
    .describe('size at which a terminal\'s scrollback file is rotated to scrollback.<n> (files with lines not yet shown are kept)'),
  shell: z.string().default('bash'),
  detect_input: z
    .boolean()
    .default(true)
    .describe('wait ends as soon as the foreground program waits for input (read from /proc); false: only shell marks and silence (settle_ms)'),
});

export const HARNESS_NAMES = ['claude-code', 'opencode', 'gemini-cli', 'codex', 'custom'] as const;

const backoffSchema = z.strictObject({
  initial: duration.prefault('5s'),
  max: duration.prefault('10m'),
  reset_after: duration.prefault('30m'),
});

/** A branch name git accepts, kept strict: it comes from the container when not configured. */
export const BRANCH_NAME = /^(?!.*\.\.)(?!.*\/\/)(?!.*(?:^|\/)[.-])(?!.*\.lock(?:\/|$))[A-Za-z0-9._/-]{1,200}(?<![./])$/;

/** A remote host git can push to without a repository around it: a URL, scp-like host:path, or an absolute path. */
export function isRemoteAddress(remote: string): boolean {
  if (remote.startsWith('-') || /[\0\n]/.test(remote)) return false;
  return /^[a-z][a-z0-9+.-]*:\/\/./i.test(remote) || remote.startsWith('/') || /^[^/:]+:./.test(remote);
}

const pushSchema = z.strictObject({
  remote: z
    .string()
    .refine(isRemoteAddress, 'expected a URL (ssh://host/repo.git, https://…), host:path, or an absolute path')
    .describe('where the host pushes the agent\'s commits: a URL (ssh://, https://, git@host:path) or an absolute path of a repository outside the data directory'),
  branch: z
    .string()
    .regex(BRANCH_NAME, 'expected a branch name such as "main"')
    .optional()
    .describe('the branch pushed (same name on the remote); default: the data repo\'s current branch, else main'),
  force: z.boolean().default(false).describe('force-push when the remote has commits the agent\'s branch lacks'),
  max_bundle_mb: z.int().min(1).max(1_048_576).default(1024).describe('largest bundle of the agent\'s history the host accepts'),
});

/**
 * How often watch may start a tick, whatever started it (a message, a wake in the agent's
 * schedule.json, the restart policy): the agent can make every one of those happen, and each
 * tick is the operator's money. Reaching a limit queues the work; nothing is dropped.
 */
const limitsSchema = z.strictObject({
  min_interval: duration.prefault('10s').describe('least time between the starts of two ticks watch starts ("0s": none)'),
  ticks_per_hour: z.int().min(1).max(3600).default(30).describe('most ticks watch starts in any 60 minutes'),
  daily_budget_usd: z
    .number()
    .positive()
    .optional()
    .describe('most the ticks of any 24 hours may cost (as the harness reports it); absent: no budget'),
});

const runnerSchema = z.strictObject({
  harness: z.enum(HARNESS_NAMES).default('claude-code'),
  command: z
    .string()
    .optional()
    .describe('the harness binary, or for "custom" a command template with {prompt} and {mcp_config}'),
  model: z.string().optional(),
  harness_config: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("the harness's own configuration, laid under what the runner sets: opencode's opencode.json, Gemini CLI's settings.json, Codex CLI's config.toml (providers, base URLs, models)"),
  prompt: z.string().optional().describe('the tick prompt (a default one explains login/type/wait)'),
  prompt_file: z.string().optional().describe('a file in the data repo holding the tick prompt; wins over prompt'),
  append_system_prompt: z.string().optional(),
  permission_mode: z.enum(['default', 'acceptEdits', 'bypassPermissions', 'plan', 'dontAsk']).default('acceptEdits'),
  builtin_tools: z
    .array(z.string())
    .optional()
    .describe("Claude Code's own tools the agent gets (--tools); default: its task list only. They run on the host, outside the container"),
  allowed_tools: z.array(z.string()).optional(),
  disallowed_tools: z.array(z.string()).optional(),
  max_turns: z.int().positive().optional(),
  max_budget_usd: z.number().positive().optional(),
  context_window: z.int().positive().optional().describe('tokens; default from the model'),
  wrap_up_ratio: z.number().gt(0).lt(1).default(0.7),
  timeout: duration.prefault('2h'),
  idle_timeout: duration.prefault('15m'),
  grace_period: duration.prefault('30s'),
  restart: z.enum(['no', 'on-failure', 'always']).default('on-failure'),
  max_restarts: z.int().min(0).default(0).describe('0 means unlimited'),
  backoff: backoffSchema.prefault({}),
  retry: z
    .strictObject({
      max_attempts: z.int().min(1).max(100).default(6),
      initial: duration.prefault('10s'),
      max: duration.prefault('5m'),
      total: duration.prefault('30m').describe("one tick's retries end within this long from its start (and within runner.timeout)"),
    })
    .prefault({}),
  secrets_dir: z.string().optional().describe('one file per variable; default <XDG config>/agent-kernel/secrets/<name>'),
  env: z.record(z.string(), z.string()).default({}),
  push: pushSchema.optional().describe('after each tick, push the agent\'s branch to this remote from a host-owned mirror; absent: no push'),
  limits: limitsSchema.prefault({}),
});

/** An instance name in a mail policy, or "*" (any registered instance). */
const mailPeer = z.string().regex(/^(\*|[A-Za-z0-9_.-]{1,64})$/, 'expected an instance name or "*"');

/**
 * The post office (src/mail): which instances this one may write to and hear from, and how
 * much. A message passes only when the sender's `send_to` names the recipient and the
 * recipient's `accept_from` names the sender. Nothing is allowed until the operator says so.
 */
const mailSchema = z.strictObject({
  send_to: z.array(mailPeer).max(1000).default([]).describe('instances this one may send messages to ("*": any)'),
  accept_from: z.array(mailPeer).max(1000).default([]).describe('instances this one takes messages from ("*": any)'),
  max_bytes: z.int().min(256).max(1_048_576).default(16_384).describe('largest message text, in bytes'),
  send_per_minute: z.int().min(1).max(600).default(10).describe('messages this instance may send a minute; more wait in its outbox'),
  max_per_tick: z.int().min(1).max(1000).default(20).describe("other agents' messages and inbox notes handed to one tick (the operator's all come first and do not count); more wait for the next"),
});

/**
 * Snapshots of the whole instance (src/snapshot): taken before every tick unless turned off,
 * the oldest automatic ones removed past `keep` or past `max_store_mb` (never the newest), and
 * each bounded, since everything in one came from the agent.
 */
const snapshotsSchema = z.strictObject({
  before_tick: z.boolean().default(true).describe('take a snapshot before every tick (watch and kernel-runner tick)'),
  keep: z.int().min(1).max(10_000).default(20).describe('automatic snapshots kept; older ones are removed first, never the newest'),
  max_store_mb: z.int().min(1).default(20_480).describe('most disk all snapshots of the instance may take together; the oldest automatic ones go first'),
  max_mb: z.int().min(1).default(4096).describe('largest content one snapshot may hold (a larger one is refused, saying which file)'),
  max_files: z.int().min(1).default(200_000).describe('most files and folders one snapshot may hold'),
});

export const agentConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  model: z.string().optional().describe('shorthand for runner.model'),
  hook_env_prefix: z
    .string()
    .regex(/^[A-Z][A-Z0-9_]*$/, 'expected upper-case letters, digits and _ (like "AGENT")')
    .default('AGENT'),
  container: containerSchema.prefault({}),
  tty: ttySchema.prefault({}),
  runner: runnerSchema.prefault({}),
  mail: mailSchema.prefault({}),
  snapshots: snapshotsSchema.prefault({}),
});

export type AgentConfig = z.output<typeof agentConfigSchema>;
export type ContainerConfig = AgentConfig['container'];
export type TtyConfig = AgentConfig['tty'];
export type RunnerConfig = AgentConfig['runner'];
export type PushConfig = NonNullable<RunnerConfig['push']>;
export type TickLimits = RunnerConfig['limits'];
export type MailConfig = AgentConfig['mail'];

/** Pure: validate a parsed JSON value. `file` is only used in error messages. */
export function parseAgentConfig(input: unknown, file = 'agent_config.json'): AgentConfig {
  return parseWith(agentConfigSchema, input ?? {}, file);
}
