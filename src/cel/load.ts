import { createRequire } from 'node:module';
import type * as CelIndex from './index.js';

type CelModule = typeof CelIndex;

let loaded: CelModule | undefined;

/**
 * Capstan's CEL (`./index.js`), evaluated on first use: it and @bufbuild/cel build their protobuf
 * descriptors and function tables when evaluated (about 15 ms), which a server start needs only
 * when something compiles an expression (a CRD with validation rules, an admission policy, a
 * webhook's matchConditions, structured authentication's claim rules). Modules outside src/cel
 * take CEL's functions from here and only its types, constants and type builders (`types.ts`,
 * `source.ts`, `limits.ts`, which import nothing) directly, so that no import evaluates it early.
 *
 * In the bundle (CommonJS), `require` is esbuild's, which evaluates the bundled module on this
 * first call; tsc's ES modules have no `require` and load it from dist/ (Node 20.19+ requires an
 * ES module synchronously, sharing the instance an `import` gets).
 */
export function cel(): CelModule {
  loaded ??= (
    typeof require === 'function'
      ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- bundled lazily by esbuild, see above
        require('./index.js')
      : createRequire(import.meta.url)('./index.js')
  ) as CelModule;
  return loaded;
}
