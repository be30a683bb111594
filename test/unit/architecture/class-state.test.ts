import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');
/** State that changes together belongs in a small object of its own (issue 29): past this, split the class. */
const MOST_MUTABLE_FIELDS = 12;

/** Each class in `text` with how many fields it can reassign (properties and constructor parameter properties not readonly). */
function mutableFields(file: string, text: string): { name: string; fields: string[] }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const classes: { name: string; fields: string[] }[] = [];
  const mutable = (node: ts.Node): boolean => !(ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Readonly);
  const visit = (node: ts.Node): void => {
    if (ts.isClassLike(node)) {
      const fields: string[] = [];
      for (const member of node.members) {
        if (ts.isPropertyDeclaration(member) && mutable(member)) fields.push(member.name.getText(source));
        if (ts.isConstructorDeclaration(member)) {
          for (const p of member.parameters) if (ts.isParameterPropertyDeclaration(p, member) && mutable(p)) fields.push(p.name.getText(source));
        }
      }
      classes.push({ name: `${path.relative(SRC, file)}: ${node.name?.text ?? '(anonymous)'}`, fields });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return classes;
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourcesUnder(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

describe('state of classes in src/', () => {
  it('counts reassignable fields, not readonly ones (so the check below can fail)', () => {
    const [planted] = mutableFields('planted.ts', 'class A { a = 1; private b?: string; readonly c = 2; constructor(private d: number, private readonly e: number) {} }');
    expect(planted?.fields).toEqual(['a', 'b', 'd']);
  });

  it(`no class keeps more than ${MOST_MUTABLE_FIELDS} fields it can reassign`, () => {
    const crowded = sourcesUnder(SRC)
      .flatMap((file) => mutableFields(file, readFileSync(file, 'utf8')))
      .filter((c) => c.fields.length > MOST_MUTABLE_FIELDS)
      .map((c) => `${c.name} (${c.fields.length}: ${c.fields.join(', ')})`);
    expect(crowded).toEqual([]);
  });
});
