/**
 * No string-keyed record is indexed with a key that is not a literal but through src/own-keys.ts
 * (issue #30): `record[id]` and `id in record` find `constructor` in every object, and
 * `record[id] = v` with `__proto__` sets its prototype. Read from the type checker, so a new
 * `state.things[req.params.id]` fails here, not in production. `delete record[id]` is allowed:
 * it touches own keys only. The reference worker (src/cli/worker) is a client and left out.
 */
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { own, ownsKey, putOwn } from '../../src/own-keys.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CHECKED = /^(src|commands|projections|queries)\//;
const EXEMPT = /^(src\/own-keys\.ts|src\/cli\/worker\/)/;

function program(): ts.Program {
  const file = path.join(ROOT, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(
    file,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const files = config.fileNames.filter((f) => CHECKED.test(path.relative(ROOT, f)));
  return ts.createProgram(files, config.options);
}

const isLiteral = (node: ts.Node) => ts.isStringLiteralLike(node) || ts.isNumericLiteral(node);

/** `record[key]` with a key typed `string` on a type with a string index (not a list), but `delete`'s. */
function indexesRecord(checker: ts.TypeChecker, node: ts.ElementAccessExpression): boolean {
  if (isLiteral(node.argumentExpression) || ts.isDeleteExpression(node.parent)) return false;
  const key = checker.getTypeAtLocation(node.argumentExpression);
  const stringy = [key, ...(key.isUnion() ? key.types : [])].some((t) => t.flags & ts.TypeFlags.String);
  const record = checker.getApparentType(checker.getNonNullableType(checker.getTypeAtLocation(node.expression)));
  return stringy && !!checker.getIndexInfoOfType(record, ts.IndexKind.String) && !checker.isArrayLikeType(record);
}

/** Every place that indexes a record with a key that is not a literal, as `file:line: code`. */
function unguardedIndexing(): string[] {
  const p = program();
  const checker = p.getTypeChecker();
  const found: string[] = [];
  for (const source of p.getSourceFiles()) {
    const file = path.relative(ROOT, source.fileName);
    if (source.isDeclarationFile || !CHECKED.test(file) || EXEMPT.test(file)) continue;
    const visit = (node: ts.Node) => {
      const inTest =
        ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword && !isLiteral(node.left);
      if (inTest || (ts.isElementAccessExpression(node) && indexesRecord(checker, node))) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push(`${file}:${line}: ${node.getText().slice(0, 80)}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('own keys', () => {
  it('reads, tests and writes only what a record holds itself', () => {
    const record: Record<string, number> = { a: 1 };
    for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__']) {
      expect(own(record, name)).toBeUndefined();
      expect(ownsKey(record, name)).toBe(false);
    }
    putOwn(record, '__proto__', 2);
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(own(record, '__proto__')).toBe(2);
    expect(JSON.stringify(record)).toBe('{"a":1,"__proto__":2}');
  });

  it('are how every record is indexed with a key from outside', { timeout: 60_000 }, () => {
    expect(unguardedIndexing()).toEqual([]);
  });
});
