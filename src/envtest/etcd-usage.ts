/** The `--help` text of the envtest etcd stand-in (printed by it, and by its wrapper script without starting Node). */
export const ETCD_STAND_IN_USAGE = `Usage: etcd [flags]

A stand-in for etcd written by \`capstan envtest-assets\`: Capstan does not use etcd. It answers the
health check envtest polls and exits on SIGTERM. Other flags are accepted and ignored.

      --listen-client-urls (default "http://127.0.0.1:2379")
          Comma-separated http URLs to answer GET /health on.
      --advertise-client-urls
          Ignored.
      --data-dir
          Ignored.
      --listen-peer-urls
          Ignored.
`;
