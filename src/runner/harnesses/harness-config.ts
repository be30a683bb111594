type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Pure: `over` laid on `under`, objects merged key by key, anything else (arrays included)
 * replaced. The runner lays what it must decide (our MCP server, the tools, trust) over the
 * operator's `runner.harness_config`, so the operator configures providers and models but
 * cannot drop our server.
 */
export function layConfig(under: Json, over: Json): Json {
  const result: Json = { ...under };
  for (const [key, value] of Object.entries(over)) {
    const below = result[key];
    result[key] = isPlainObject(below) && isPlainObject(value) ? layConfig(below, value) : value;
  }
  return result;
}

/** The operator's harness configuration (an object, or nothing). */
export function operatorHarnessConfig(config: { harness_config?: Json | undefined }): Json {
  return config.harness_config ?? {};
}
