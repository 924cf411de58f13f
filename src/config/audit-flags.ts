import type { FlagSpec } from './server-config.js';

function count(name: string, v: string): number {
  if (!/^-?\d+$/.test(v)) throw new Error(`invalid argument "${v}" for "--${name}" flag: strconv.ParseInt: parsing "${v}": invalid syntax`);
  const n = Number(v);
  if (n < 0) throw new Error(`--${name} ${n} can't be a negative number`);
  return n;
}

/** The audit log flags, with kube-apiserver's names, defaults and refusals. */
export const AUDIT_FLAGS: FlagSpec[] = [
  {
    name: 'audit-log-path',
    group: 'audit',
    default: '',
    help: "If set, requests the audit policy selects are logged to this file ('-' means standard out). Needs --audit-policy-file.",
    apply: (c, v) => {
      c.auditLogPath = v;
    },
  },
  {
    name: 'audit-policy-file',
    group: 'audit',
    default: '',
    help: 'Path to the file that defines the audit policy configuration (audit.k8s.io/v1 Policy, YAML or JSON).',
    apply: (c, v) => {
      c.auditPolicyFile = v;
    },
  },
  {
    name: 'audit-log-format',
    group: 'audit',
    default: 'json',
    help: 'Format of saved audits: "legacy" (one line of text per event) or "json" (one audit.k8s.io/v1 Event per line).',
    apply: (c, v) => {
      if (v !== 'json' && v !== 'legacy') throw new Error(`invalid audit log format ${v}, allowed formats are "legacy,json"`);
      c.auditLogFormat = v;
    },
  },
  {
    name: 'audit-log-maxage',
    group: 'audit',
    default: '366',
    help: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename (0: not removed by age).',
    apply: (c, v) => {
      c.auditLogMaxAge = count('audit-log-maxage', v);
    },
  },
  {
    name: 'audit-log-maxbackup',
    group: 'audit',
    default: '100',
    help: 'The maximum number of old audit log files to retain (0: no limit).',
    apply: (c, v) => {
      c.auditLogMaxBackup = count('audit-log-maxbackup', v);
    },
  },
  {
    name: 'audit-log-maxsize',
    group: 'audit',
    default: '100',
    help: 'The maximum size in megabytes of the audit log file before it gets rotated (0: never rotated).',
    apply: (c, v) => {
      c.auditLogMaxSize = count('audit-log-maxsize', v);
    },
  },
  {
    name: 'audit-log-compress',
    group: 'audit',
    default: 'false',
    help: 'If set, the rotated log files will be compressed using gzip.',
    apply: (c, v) => {
      if (v !== 'true' && v !== 'false') throw new Error(`invalid argument "${v}" for "--audit-log-compress" flag: must be true or false`);
      c.auditLogCompress = v === 'true';
    },
  },
  {
    name: 'audit-log-mode',
    group: 'audit',
    default: 'blocking',
    help: 'Strategy for sending audit events: blocking, batch or blocking-strict (Capstan writes every event before the request goes on, whatever the mode).',
    apply: (c, v) => {
      if (v !== 'blocking' && v !== 'batch' && v !== 'blocking-strict')
        throw new Error(`invalid audit log mode ${v}, allowed modes are "batch,blocking,blocking-strict"`);
      c.auditLogMode = v;
    },
  },
];
