import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import { CodedError } from '../errors.js';
import { type AgentConfig, agentConfigSchema, parseAgentConfig } from './agent-config.js';
import { instancePaths } from './paths.js';
import { PARSED_ONCE, readJsonFile } from './parse.js';

/**
 * Who decides what. The operator's file (paths.ts `operatorConfig`: `<config home>/instances/<name>.json`) is out of the
 * container's reach and is the only source of fields with host effect: what the host runs and
 * with which environment, the container backend, engine, mounts, capabilities and network,
 * the tool rules and permission mode given to the harness, limits and restarts.
 * The data repo's `system/agent_config.json` (seed 000) is the agent's to edit: it may tune only
 * the fields below (terminal geometry and timing, the shell, the prompt); the operator's file wins even
 * there. Anything else it says that differs is ignored, and reported as such.
 * Both files have the shape of agent-config.ts.
 */

/**
 * The fields the agent's own file may set: true, the whole section; a list, those fields; `except`, the
 * section but those fields (a key the section does not have stays the agent's, and is an error). Not
 * `tty.history_limit`, `raw_log_max_bytes` or `scrollback_max_bytes`: they size what the host keeps
 * (files in the host-private state folder, history the server reads back at adoption).
 */
const AGENT_TUNABLE: Record<string, true | readonly string[] | { except: readonly string[] }> = {
  $schema: true,
  hook_env_prefix: true,
  tty: { except: ['history_limit', 'raw_log_max_bytes', 'scrollback_max_bytes'] },
  runner: ['prompt', 'prompt_file', 'append_system_prompt', 'wrap_up_ratio', 'context_window'],
};

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The agent-tunable part of `raw`, and the rest. */
export function splitAgentFields(raw: Json): { tunable: Json; rest: Json } {
  const tunable: Json = {};
  const rest: Json = {};
  for (const [key, value] of Object.entries(raw)) {
    const rule = AGENT_TUNABLE[key];
    if (rule === true) tunable[key] = value;
    else if (rule && isObject(value)) {
      for (const [field, inner] of Object.entries(value)) {
        const agents = 'except' in rule ? !rule.except.includes(field) : rule.includes(field);
        const into = agents ? tunable : rest;
        into[key] = { ...(into[key] as Json | undefined), [field]: inner };
      }
    } else rest[key] = value;
  }
  return { tunable, rest };
}

/** `over` on top of `base`, objects merged key by key (arrays and values replace). */
function merge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const under = out[key];
    out[key] = isObject(under) && isObject(value) ? merge(under, value) : value;
  }
  return out;
}

/** Dotted paths of the leaves of `raw` (arrays and values are leaves). */
function leaves(raw: Json, prefix = ''): string[] {
  return Object.entries(raw).flatMap(([key, value]) => (isObject(value) ? leaves(value, `${prefix}${key}.`) : [`${prefix}${key}`]));
}

function at(value: unknown, dotted: string): unknown {
  return dotted.split('.').reduce<unknown>((v, key) => (isObject(v) ? v[key] : undefined), value);
}

export interface EffectiveConfig {
  config: AgentConfig;
  /** Fields of the agent's file that would change what the host does, and so were ignored. */
  ignored: string[];
}

/**
 * Pure: the operator's raw config (trusted) and the agent's (untrusted) → what applies.
 * Precedence: the operator's file, then the agent-tunable fields of the agent's file, then defaults.
 */
export function effectiveConfig(operatorRaw: unknown, agentRaw: unknown, files: { operator: string; agent: string }): EffectiveConfig {
  const operator = parseAgentConfig(operatorRaw, files.operator) && ((operatorRaw ?? {}) as Json);
  if (agentRaw !== undefined && !isObject(agentRaw)) {
    throw new CodedError('CONFIG_INVALID', `${files.agent}: (top level): expected a JSON object.\nFix the file and try again.`, { details: { file: files.agent } });
  }
  const { tunable, rest } = splitAgentFields(agentRaw ?? {});
  parseAgentConfig(tunable, files.agent);
  const config = parseAgentConfig(merge(tunable, operator), files.operator);
  // What the host would do if the agent's file had its way, to report only real differences.
  const asked = agentConfigSchema.safeParse(merge(operator, agentRaw ?? {}), PARSED_ONCE);
  const ignored = leaves(rest).filter((field) =>
    asked.success ? !isDeepStrictEqual(at(asked.data, field), at(config, field)) : !isDeepStrictEqual(at(rest, field), at(operator, field)),
  );
  return { config, ignored };
}

/** The raw contents of both files of an instance (the agent's read as untrusted input). */
export async function readConfigFiles(name: string, dataDir: string, env: NodeJS.ProcessEnv = process.env) {
  const paths = instancePaths(name, dataDir, env);
  return {
    operator: { file: paths.operatorConfig, raw: await readJsonFile(paths.operatorConfig) },
    agent: { file: path.relative(process.cwd(), paths.agentConfig) || paths.agentConfig, raw: await readJsonFile(paths.agentConfig, paths.root) },
  };
}

/** Read both files of an instance and combine them (see effectiveConfig). */
export async function loadEffectiveConfig(name: string, dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<EffectiveConfig> {
  const { operator, agent } = await readConfigFiles(name, dataDir, env);
  return effectiveConfig(operator.raw, agent.raw, { operator: operator.file, agent: agent.file });
}

/**
 * Pure: the operator's raw config with the ignored fields of the agent's file taken over
 * (`agent-kernel config <name> --adopt`, after the operator has read them).
 */
export function adoptIgnored(operatorRaw: unknown, agentRaw: unknown, ignored: readonly string[]): Json {
  const { rest } = splitAgentFields(isObject(agentRaw) ? agentRaw : {});
  let out: Json = isObject(operatorRaw) ? operatorRaw : {};
  for (const field of ignored) {
    const value = at(rest, field);
    const keys = field.split('.');
    const patch = keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Json;
    out = merge(out, patch);
  }
  return out;
}

/** One line for logs, doctor and status: which fields of the agent's file were ignored, and where they belong. */
export function describeIgnored(ignored: readonly string[], instance: { name: string; paths: { operatorConfig: string } }): string {
  const them = ignored.length === 1 ? 'it' : 'them';
  return (
    `system/agent_config.json sets ${ignored.join(', ')}, which would change what the host does; the agent can edit that file, ` +
    `so ${ignored.length === 1 ? 'it is' : 'they are'} ignored. To apply ${them}, set ${them} in ${instance.paths.operatorConfig} ` +
    `(or, after reading ${them}: agent-kernel config ${instance.name} --adopt).`
  );
}
