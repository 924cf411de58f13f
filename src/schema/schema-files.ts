import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Locates the generated schema facts (`schema/` at the project root) from both the TypeScript sources
 * and the compiled `dist/` tree, so the server never depends on anything outside the project.
 */
function findSchemaDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'schema', 'resources.json');
    try {
      readFileSync(candidate, { flag: 'r' }).subarray(0, 1);
      return join(dir, 'schema');
    } catch {
      dir = dirname(dir);
    }
  }
  throw new Error('schema/resources.json not found: run `npm run gen:schema`');
}

let schemaDir: string | undefined;

/** Absolute path of a file in the project's schema folder. */
export function schemaPath(file: string): string {
  schemaDir ??= findSchemaDir();
  return join(schemaDir, file);
}

/** Parses a JSON file from the schema folder; callers cache the result. */
export function readSchemaJson(file: string): unknown {
  return JSON.parse(readFileSync(schemaPath(file), 'utf8'));
}
