/**
 * Watches per HTTP/2 connection when the bench's watchers share connections: kube-apiserver serves
 * 100 streams at once on one connection (Go's server refuses more), so a client needing more opens
 * more connections.
 */
export const WATCHES_PER_HTTP2_CONNECTION = 100;
