import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The checks of the architecture test, as pure functions over a tree of sources (`rel` is a
 * path relative to the tree's root, with `/`): the test runs them on src/ and on planted trees
 * that each must fail. Imports are read from the syntax tree (TypeScript's parser), so static
 * imports, re-exports, `import()` and `import('…').Type` all count, and comments never do.
 */

export interface Source {
  rel: string;
  text: string;
}

export function readTree(root: string, dir = root): Source[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return readTree(root, full);
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) return [];
    return [{ rel: path.relative(root, full).split(path.sep).join('/'), text: readFileSync(full, 'utf8') }];
  });
}

const parsed = new WeakMap<Source, ts.SourceFile>();

function parse(source: Source): ts.SourceFile {
  let file = parsed.get(source);
  if (!file) parsed.set(source, (file = ts.createSourceFile(source.rel, source.text, ts.ScriptTarget.Latest, true)));
  return file;
}

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

function literalText(node: ts.Node | undefined): string | undefined {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
}

export interface ImportRef {
  specifier: string;
  dynamic: boolean;
}

const imports = new WeakMap<Source, ImportRef[]>();

/** Every module `source` imports: `import`, `export … from`, `import()`, `import('…')` in a type, `import x = require()`. */
export function importsOf(source: Source): ImportRef[] {
  const known = imports.get(source);
  if (known) return known;
  const out: ImportRef[] = [];
  imports.set(source, out);
  walk(parse(source), (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      const specifier = literalText(node.moduleSpecifier);
      if (specifier !== undefined) out.push({ specifier, dynamic: false });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const specifier = literalText(node.arguments[0]);
      // A computed import() names no module here: say so rather than miss an edge.
      out.push({ specifier: specifier ?? '<computed>', dynamic: true });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const specifier = literalText(node.argument.literal);
      if (specifier !== undefined) out.push({ specifier, dynamic: false });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const specifier = literalText(node.moduleReference.expression);
      if (specifier !== undefined) out.push({ specifier, dynamic: false });
    }
  });
  return out;
}

/** The file a relative specifier names, relative to the tree's root (`./x.js` is `x.ts`); undefined for a package. */
export function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
}

/** `a/b/c.ts` at depth 1 is `a`, at depth 2 `a/b`; files at the root are `.`. */
function folderAt(rel: string, depth: number): string {
  const parts = path.posix.dirname(rel).split('/').filter((p) => p !== '.');
  return parts.slice(0, depth).join('/') || '.';
}

export type Graph = Map<string, Set<string>>;

/** Folder → folders its files import, with folders cut to `depth` levels (subfolders merged into their parent above it). */
export function folderGraph(sources: readonly Source[], depth: number): Graph {
  const graph: Graph = new Map();
  for (const source of sources) {
    const from = folderAt(source.rel, depth);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const { specifier } of importsOf(source)) {
      const target = resolveRelative(source.rel, specifier);
      if (target === undefined || target.startsWith('../')) continue;
      const to = folderAt(target, depth);
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/**
 * One cycle per knot of folders that import each other (a strongly connected component, found
 * by Tarjan's algorithm): the shortest way from its smallest folder back to itself.
 */
export function cyclesOf(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return components.map((component) => shortestCycle(graph, component)).sort((a, b) => a.join().localeCompare(b.join()));
}

/** Breadth-first from the component's smallest folder back to it, inside the component. */
function shortestCycle(graph: Graph, component: readonly string[]): string[] {
  const start = [...component].sort()[0]!;
  const inside = new Set(component);
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (!inside.has(next)) continue;
      if (next === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return path;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

/** Cycles at every depth of folders: `a -> b -> a`, each written once (the deepest view that shows it first). */
export function folderCycles(sources: readonly Source[]): string[] {
  const deepest = Math.max(1, ...sources.map((s) => s.rel.split('/').length - 1));
  const found = new Set<string>();
  for (let depth = deepest; depth >= 1; depth--) {
    for (const cycle of cyclesOf(folderGraph(sources, depth))) found.add([...cycle, cycle[0]].join(' -> '));
  }
  return [...found];
}

/** Dynamic imports whose module is computed: no check can follow them. */
export function computedImports(sources: readonly Source[]): string[] {
  return sources.filter((s) => importsOf(s).some((i) => i.specifier === '<computed>')).map((s) => s.rel);
}

/**
 * A file the kernel's processes share, and the one module that reads and writes it. `name` is
 * the file's name (`suffix`: its extension); `generic` names ('status', 'paused') are common
 * words, so only their uses as a path count (an argument of a path or file call, or after a `/`).
 * `pathKey` is its entry in config/paths.ts (`paths.state`...).
 */
export interface SharedFile {
  name: string;
  owner: string;
  suffix?: boolean;
  generic?: boolean;
  pathKey?: string;
}

/** The modules that do raw file I/O: their functions, imported elsewhere, are reads and writes. */
const RAW_IO_MODULES = [/^(node:)?fs(\/promises)?$/, /^util\/untrusted-[a-z-]+\.ts$/, /^util\/atomic-write\.ts$/, /^config\/parse\.ts$/];
const PATH_OR_IO_CALL = /^(join|resolve|basename|dirname|rm|unlink|rename|stat|lstat|cp|copyFile)$|^(read|write|append|remove|open|watch|createRead|createWrite)/;
/** paths.ts names every path (that is its job); it reads and writes nothing. */
const PATHS_MODULE = 'config/paths.ts';

function calleeName(call: ts.CallExpression | ts.NewExpression): string {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return '';
}

/** The names `source` imports from raw I/O modules (namespaces too: `fs.readFile`). */
function rawIoNames(source: Source, file: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement)) continue;
    const specifier = literalText(statement.moduleSpecifier) ?? '';
    const target = resolveRelative(source.rel, specifier) ?? specifier;
    if (!RAW_IO_MODULES.some((m) => m.test(target))) continue;
    const clause = statement.importClause;
    if (clause?.name) names.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add(element.name.text);
  }
  // The file's own helpers that do raw I/O are raw I/O too (a local readJsonSafely(paths.state)).
  for (const statement of file.statements) {
    const helpers = ts.isFunctionDeclaration(statement) && statement.name ? [{ name: statement.name.text, body: statement.body }] : ts.isVariableStatement(statement) ? statement.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) && d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer)) ? [{ name: d.name.text, body: d.initializer.body }] : [])) : [];
    for (const helper of helpers) if (helper.body && callsAny(helper.body, names)) names.add(helper.name);
  }
  return names;
}

function callsAny(body: ts.Node, names: ReadonlySet<string>): boolean {
  let found = false;
  walk(body, (node) => {
    if (!found && (ts.isCallExpression(node) || ts.isNewExpression(node))) {
      const callee = node.expression;
      const base = ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) ? callee.expression.text : ts.isIdentifier(callee) ? callee.text : '';
      found = names.has(base);
    }
  });
  return found;
}

function namesTheFile(text: string, shared: SharedFile, inPathCall: boolean): boolean {
  if (/\s/.test(text)) return false;
  if (shared.suffix) return text.endsWith(shared.name);
  if (text === shared.name) return !shared.generic || inPathCall;
  return text.endsWith(`/${shared.name}`);
}

/**
 * Uses of a shared file outside its module, as `file: what`. Three ways to touch one: naming it
 * (its name as a path), doing raw I/O on its path (`readFile(paths.state)`), and parsing it with
 * its schema from elsewhere (`xSchema` imported from the owner).
 */
export function sharedFileLeaks(sources: readonly Source[], sharedFiles: readonly SharedFile[]): string[] {
  const leaks: string[] = [];
  for (const source of sources) {
    if (source.rel === PATHS_MODULE) continue;
    const others = sharedFiles.filter((shared) => shared.owner !== source.rel);
    const file = parse(source);
    const rawIo = rawIoNames(source, file);
    walk(file, (node) => {
      let text: string | undefined = literalText(node);
      if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) text = node.text;
      if (text !== undefined) {
        const parent = node.parent;
        const inPathCall = (ts.isCallExpression(parent) || ts.isNewExpression(parent)) && parent.arguments?.includes(node as ts.Expression) === true && PATH_OR_IO_CALL.test(calleeName(parent));
        for (const shared of others) {
          if (namesTheFile(text, shared, inPathCall)) leaks.push(`${source.rel}: names ${shared.name} (${JSON.stringify(text)}); ${shared.owner} owns it`);
        }
      }
      if (rawIo.size > 0 && (ts.isCallExpression(node) || ts.isNewExpression(node))) {
        const callee = node.expression;
        const base = ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) ? callee.expression.text : ts.isIdentifier(callee) ? callee.text : '';
        if (!rawIo.has(base)) return;
        const args = (node.arguments ?? []).map((arg) => arg.getText(file));
        for (const shared of others) {
          if (shared.pathKey === undefined) continue;
          const key = new RegExp(`\\bpaths\\.${shared.pathKey}(?![\\w$])`);
          if (args.some((arg) => key.test(arg))) leaks.push(`${source.rel}: ${calleeName(node)}() on paths.${shared.pathKey} (${shared.name}); ${shared.owner} owns it`);
        }
      }
    });
    for (const { specifier, names } of namedImports(file)) {
      const owned = others.find((shared) => resolveRelative(source.rel, specifier) === shared.owner);
      if (!owned) continue;
      for (const name of names.filter((n) => /Schema$/.test(n))) leaks.push(`${source.rel}: imports ${name} to parse ${owned.name}; ${owned.owner} owns it`);
    }
  }
  return leaks;
}

function namedImports(file: ts.SourceFile): Array<{ specifier: string; names: string[] }> {
  return file.statements.flatMap((statement) => {
    if (!ts.isImportDeclaration(statement)) return [];
    const bindings = statement.importClause?.namedBindings;
    const names = bindings && ts.isNamedImports(bindings) ? bindings.elements.map((e) => (e.propertyName ?? e.name).text) : [];
    return [{ specifier: literalText(statement.moduleSpecifier) ?? '', names }];
  });
}

/** Folders holding more than `limit` files directly, as `folder: N files`. */
export function crowdedFolders(sources: readonly Source[], limit: number): string[] {
  const counts = new Map<string, number>();
  for (const source of sources) counts.set(path.posix.dirname(source.rel), (counts.get(path.posix.dirname(source.rel)) ?? 0) + 1);
  return [...counts].filter(([, count]) => count > limit).map(([folder, count]) => `${folder}: ${count} files`);
}

