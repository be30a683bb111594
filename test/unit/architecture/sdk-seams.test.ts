import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { type Source, readTree } from './source-graph.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');

/** Methods of the SDK's objects that only the SDK may define: replacing one patches the SDK. */
const SDK_METHODS = new Set(['send', 'connect', 'close', 'start', 'setRequestHandler', 'createToolError', 'validateToolInput', 'validateToolOutput']);

/**
 * Where a file that uses the MCP SDK reaches into it past its public API: a member whose name
 * starts with `_` (the SDK's private fields; `_meta` is the protocol's own), or an SDK method
 * replaced by assignment. With none, the next SDK release is a version bump, not a port.
 */
function privateReaches(source: Source): string[] {
  if (!source.text.includes('@modelcontextprotocol/sdk')) return [];
  const file = ts.createSourceFile(source.rel, source.text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const where = (node: ts.Node, what: string) => found.push(`${source.rel}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${what}`);
  const memberName = (node: ts.Node): string | undefined =>
    ts.isPropertyAccessExpression(node) ? node.name.text : ts.isElementAccessExpression(node) && ts.isStringLiteral(node.argumentExpression) ? node.argumentExpression.text : undefined;
  const visit = (node: ts.Node): void => {
    const name = memberName(node);
    if (name?.startsWith('_') && name !== '_meta') where(node, `reads ${name}`);
    if (ts.isPropertySignature(node) && ts.isIdentifier(node.name) && node.name.text.startsWith('_') && node.name.text !== '_meta') where(node, `types ${node.name.text}`);
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const assigned = memberName(node.left);
      if (assigned !== undefined && SDK_METHODS.has(assigned)) where(node, `replaces ${assigned}`);
    }
    node.forEachChild(visit);
  };
  visit(file);
  return found;
}

describe('the MCP SDK through its public seams', () => {
  it('no file of src/ reads an SDK private or replaces an SDK method', () => {
    expect(readTree(SRC).flatMap(privateReaches)).toEqual([]);
  });

  it('fails on each planted reach: a private handler map, a patched send, a replaced createToolError', () => {
    const sdk = "import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\n";
    const planted = (text: string) => privateReaches({ rel: 'server/x.ts', text: sdk + text }).map((f) => f.replace(/^server\/x\.ts:\d+ /, ''));
    expect(planted('const h = (server.server as unknown as { _requestHandlers: Map<string, unknown> })._requestHandlers;')).toEqual(['reads _requestHandlers', 'types _requestHandlers']);
    expect(planted('transport.send = async (m) => undefined;')).toEqual(['replaces send']);
    expect(planted("(server as any)['createToolError'] = () => undefined;")).toEqual(['replaces createToolError']);
    expect(planted('const token = extra._meta?.progressToken; transport.onmessage = () => undefined;')).toEqual([]);
    expect(privateReaches({ rel: 'tty/x.ts', text: 'const core = term._core;' })).toEqual([]);
  });
});
