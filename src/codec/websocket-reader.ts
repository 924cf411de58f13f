import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/** The GUID RFC 6455 appends to a client's key to prove the handshake was read. */
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The stream protocols kube's wsstream reader offers: raw bytes in binary messages, or base64 in text messages. */
const READER_PROTOCOLS = new Map<string, { binary: boolean }>([
  ['', { binary: true }],
  ['binary.k8s.io', { binary: true }],
  ['base64.binary.k8s.io', { binary: false }],
]);

/** kube's messages are at most this many bytes of the stream (its copy buffer). */
const MESSAGE_BYTES = 2048;

const OPCODE_TEXT = 0x1;
const OPCODE_BINARY = 0x2;
const OPCODE_CLOSE = 0x8;
const OPCODE_PING = 0x9;
const OPCODE_PONG = 0xa;
/** A client frame's payload beyond this ends the connection: the reader expects nothing from clients. */
const MAX_CLIENT_FRAME = 1 << 20;

/** Whether `req` asks to become a WebSocket (`Upgrade: websocket` and an `upgrade` token in `Connection`). */
export function isWebSocketRequest(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  if (typeof upgrade !== 'string' || upgrade.toLowerCase() !== 'websocket') return false;
  const connection = req.headersDistinct['connection'] ?? [];
  return connection.some((v) => v.split(',').some((token) => token.trim().toLowerCase() === 'upgrade'));
}

/** A raw HTTP/1.1 refusal written on a connection that is not upgraded, as Go's x/net/websocket writes it. */
function refuse(socket: Socket, code: number, text: string, body: string, extraHeader = ''): void {
  socket.end(`HTTP/1.1 ${code} ${text}\r\n${extraHeader}\r\n${body}`);
}

/** One server frame (never masked): FIN set, the opcode, the payload's length, the payload. */
function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  let head: Buffer;
  if (n < 126) head = Buffer.from([0x80 | opcode, n]);
  else if (n < 0x10000) {
    head = Buffer.from([0x80 | opcode, 126, 0, 0]);
    head.writeUInt16BE(n, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

/** The close frame Go's x/net/websocket sends when the server closes: status 1000, normal closure. */
const NORMAL_CLOSE = frame(OPCODE_CLOSE, Buffer.from([0x03, 0xe8]));

/**
 * kube's wsstream Reader (what kube-apiserver's StreamObject does for a WebSocket request, e.g. a
 * container's log): answers the handshake on the taken connection, then sends `source` as messages
 * of at most 2,048 bytes, raw in binary messages (protocols `binary.k8s.io` and none) or base64 in
 * text messages (`base64.binary.k8s.io`), after one empty message. Ends with a normal close once
 * `source` ends; whatever the client sends is read and dropped (its pings answered), and its close
 * or a lost connection destroys `source`. A handshake Go's x/net/websocket would refuse is refused
 * as it refuses it (400 with its error text, 403 for no common protocol) and `source` destroyed.
 */
export function streamToWebSocket(req: IncomingMessage, connection: { socket: Socket; head: Buffer }, source: Readable): void {
  const { socket } = connection;
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || key === '') {
    source.destroy();
    refuse(socket, 400, 'Bad Request', 'mismatch challenge/response');
    return;
  }
  if (req.headers['sec-websocket-version'] !== '13') {
    source.destroy();
    refuse(socket, 400, 'Bad Request', 'missing or bad WebSocket Version', 'Sec-WebSocket-Version: 13\r\n');
    return;
  }
  const offered = (req.headers['sec-websocket-protocol'] ?? '').trim();
  const protocols = offered === '' ? [''] : offered.split(',').map((p) => p.trim());
  const protocol = protocols.find((p) => READER_PROTOCOLS.has(p));
  if (protocol === undefined) {
    source.destroy();
    refuse(socket, 403, 'Forbidden', '');
    return;
  }
  const binary = READER_PROTOCOLS.get(protocol)!.binary;
  const accept = createHash('sha1')
    .update(key + WEBSOCKET_GUID)
    .digest('base64');
  // As Go's server: the chosen protocol is named even when it is the empty one.
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
  );

  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    source.destroy();
    if (!socket.destroyed) socket.end(NORMAL_CLOSE);
  };
  const send = (bytes: Buffer): boolean => {
    if (binary) return socket.write(frame(OPCODE_BINARY, bytes));
    return socket.write(frame(OPCODE_TEXT, Buffer.from(bytes.toString('base64'))));
  };
  send(Buffer.alloc(0));
  source.on('data', (chunk: Buffer) => {
    if (closed) return;
    let fits = true;
    for (let at = 0; at < chunk.length; at += MESSAGE_BYTES) fits = send(chunk.subarray(at, at + MESSAGE_BYTES)) && fits;
    if (!fits) {
      source.pause();
      socket.once('drain', () => source.resume());
    }
  });
  source.on('end', close);
  source.on('error', () => {
    closed = true;
    socket.destroy();
  });
  socket.on('close', () => {
    closed = true;
    source.destroy();
  });
  socket.on('error', () => socket.destroy());
  readClientFrames(socket, connection.head, {
    ping: (payload) => {
      if (!closed) socket.write(frame(OPCODE_PONG, payload));
    },
    close,
  });
}

/** Reads a client's frames from `socket` (after `head`), answering pings and ending at a close frame or a malformed one. */
function readClientFrames(socket: Socket, head: Buffer, on: { ping(payload: Buffer): void; close(): void }): void {
  let pending = head;
  const parse = (): void => {
    for (;;) {
      if (pending.length < 2) return;
      const opcode = pending[0] & 0x0f;
      const masked = (pending[1] & 0x80) !== 0;
      let length = pending[1] & 0x7f;
      let at = 2;
      if (length === 126) {
        if (pending.length < 4) return;
        length = pending.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (pending.length < 10) return;
        const big = pending.readBigUInt64BE(2);
        length = big > BigInt(MAX_CLIENT_FRAME) ? MAX_CLIENT_FRAME + 1 : Number(big);
        at = 10;
      }
      if (length > MAX_CLIENT_FRAME) {
        socket.destroy();
        return;
      }
      const maskAt = at;
      if (masked) at += 4;
      if (pending.length < at + length) return;
      const payload = Buffer.from(pending.subarray(at, at + length));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i] ^= pending[maskAt + (i % 4)];
      pending = pending.subarray(at + length);
      if (opcode === OPCODE_CLOSE) {
        on.close();
        return;
      }
      if (opcode === OPCODE_PING) on.ping(payload);
    }
  };
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    parse();
  });
  socket.on('end', () => on.close());
  parse();
}
