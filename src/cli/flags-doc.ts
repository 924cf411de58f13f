import type { FlagGroup, FlagSpec } from '../config/server-config.js';
import { FLAGS } from './flags.js';

/**
 * docs/flags.md, rendered from the flag specs (FLAGS): the same names, defaults, help and known
 * values `--help` prints, grouped into sections. `npm run gen:flags-doc` writes the file and
 * test/unit/flags-doc.test.ts fails when the committed file differs, so the page cannot drift
 * from the code: change a flag's text in its spec, then regenerate.
 */

/** The sections of the page, in order, with the page that explains each group's flags in context. */
const SECTIONS: readonly { group: FlagGroup; title: string; seeAlso?: string }[] = [
  { group: 'serving', title: 'Serving', seeAlso: '[HTTPS and certificates](serving-and-security.md#https-and-certificates)' },
  { group: 'authentication', title: 'Authentication', seeAlso: '[Authentication](serving-and-security.md#authentication)' },
  { group: 'authorization', title: 'Authorization', seeAlso: '[Authorization](serving-and-security.md#authorization)' },
  { group: 'admission', title: 'Admission', seeAlso: '[Admission](api-coverage.md#admission)' },
  { group: 'api', title: 'API and Services', seeAlso: '[API coverage](api-coverage.md)' },
  { group: 'limits', title: 'Request limits', seeAlso: '[Request limits](api-coverage.md#request-limits)' },
  { group: 'flowcontrol', title: 'Overload protection', seeAlso: '[Flow control](flow-control.md)' },
  { group: 'storage', title: 'Storage', seeAlso: '[Storage backends](operations.md#storage-backends)' },
  { group: 'processes', title: 'Workers and shutdown', seeAlso: '[Workers](operations.md#workers)' },
  { group: 'controllers', title: 'Controllers', seeAlso: '[Controllers](api-coverage.md#controllers)' },
  { group: 'audit', title: 'Audit log', seeAlso: '[Audit log](serving-and-security.md#audit-log)' },
  { group: 'aggregation', title: 'Aggregation', seeAlso: '[Aggregation](aggregation.md)' },
  { group: 'logging', title: 'Logs', seeAlso: '[Metrics and logs](operations.md#metrics-and-logs)' },
  {
    group: 'compatibility',
    title: 'Accepted for kube-apiserver compatibility',
    seeAlso: '[envtest](envtest.md), which passes them',
  },
];

const HEADER = `# Flags

<!-- Generated from the flag specs (src/cli/flags.ts and src/config/*-flags.ts) by
     \`npm run gen:flags-doc\`. Edit the specs, not this file: \`npm test\` fails when they differ. -->

\`capstan [flags]\`: with \`npm start -- [flags]\` or \`node dist/src/main.js [flags]\`. Both \`--flag=value\` and
\`--flag value\` work, and \`--help\` prints this list. An unknown flag or a bad value exits with status 2 and a
one-line reason; a start-up failure (port in use, Redis unreachable, kubeconfig path not writable) exits
with status 1 and one line naming what failed, for example
\`Error: cannot listen on 127.0.0.1:6443: address already in use\`. The other command,
\`capstan envtest-assets DIR [flags]\`, is described in [envtest](envtest.md).
`;

/** `text` safe inside a table cell (a `|` would end the cell, a newline the row). */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/** Help text with each flag it names (`--name`, `--name=value`) set as code. */
function prose(text: string): string {
  return text.replace(/(^|[\s(])(--[a-z][a-z0-9*-]*(?:=[^\s;)]*[^\s;).,:])?)/g, '$1`$2`');
}

function flagRow(f: FlagSpec): string {
  const name = `\`--${f.name}\``;
  const def = f.default === '' ? '' : `\`${f.default}\``;
  return `| ${name} | ${cell(def)} | ${cell(prose(f.help))} |`;
}

function valuesTable(f: FlagSpec): string[] {
  const values = f.values?.() ?? [];
  if (values.length === 0) return [];
  return ['', `Values of \`--${f.name}\`:`, '', '| Value | Meaning |', '|---|---|', ...values.map((v) => `| \`${v.value}\` | ${cell(prose(v.help))} |`)];
}

/** The markdown of docs/flags.md for `flags` (default: every flag of the server). */
export function renderFlagsDoc(flags: readonly FlagSpec[] = FLAGS): string {
  const out = [HEADER];
  out.push(
    SECTIONS.filter((s) => flags.some((f) => f.group === s.group))
      .map((s) => `[${s.title}](#${anchor(s.title)})`)
      .join(' · '),
    '',
  );
  for (const section of SECTIONS) {
    const members = flags.filter((f) => f.group === section.group);
    if (members.length === 0) continue;
    out.push(`## ${section.title}`, '');
    if (section.seeAlso !== undefined) out.push(`In context: ${section.seeAlso}.`, '');
    out.push('| Flag | Default | Meaning |', '|---|---|---|', ...members.map(flagRow));
    for (const f of members) out.push(...valuesTable(f));
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
export function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
