/**
 * A minimal WebSocket client over a plain TCP connection, for tests that need to see the handshake's
 * bytes and every frame: the answer's status line and headers, then each message (opcode and
 * payload) and the close frame's status, as the server sent them.
 */
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface WebSocketMessage {
  opcode: number;
  data: Buffer;
}

/** What a server answered: the handshake, and then its frames until it closed. */
export class WebSocketClient {
  status = 0;
  /** Header names in lower case. */
  headers = new Map<string, string>();
  /** The body of a refusal (what followed the headers when the status is not 101). */
  refusal = '';
  readonly messages: WebSocketMessage[] = [];
  /** The status of the server's close frame, if it sent one. */
  closeStatus: number | undefined;
  readonly ended: Promise<void>;
  private readonly waiters: Array<() => void> = [];
  private buffer = Buffer.alloc(0);
  private headDone = false;

  constructor(
    readonly socket: Socket,
    readonly key: string,
  ) {
    this.ended = new Promise((resolve) => socket.on('close', () => resolve()));
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('close', () => this.wake());
    socket.on('end', () => this.wake());
    socket.on('error', () => undefined);
  }

  /** Resolves once the handshake's answer arrived (or the connection closed without one). */
  async answered(): Promise<void> {
    while (!this.headDone && !this.socket.destroyed && !this.socket.readableEnded) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once at least `count` messages arrived (or the connection closed). */
  async messagesArrived(count: number): Promise<WebSocketMessage[]> {
    while (this.messages.length < count && !this.socket.destroyed && !(this.socket.readableEnded && this.buffer.length === 0)) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return this.messages;
  }

  /** Sends a masked client frame. */
  send(opcode: number, payload: Buffer): void {
    const mask = randomBytes(4);
    const masked = Buffer.from(payload);
    for (let i = 0; i < masked.length; i++) masked[i] ^= mask[i % 4];
    const head =
      payload.length < 126
        ? Buffer.from([0x80 | opcode, 0x80 | payload.length])
        : Buffer.from([0x80 | opcode, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    this.socket.write(Buffer.concat([head, mask, masked]));
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private parse(): void {
    if (!this.headDone) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
      this.status = Number(lines[0].split(' ')[1]);
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        this.headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
      }
      this.buffer = this.buffer.subarray(end + 4);
      this.headDone = true;
    }
    if (this.status !== 101) {
      this.refusal = this.buffer.toString('utf8');
      this.wake();
      return;
    }
    for (;;) {
      if (this.buffer.length < 2) break;
      assertUnmasked(this.buffer[1]);
      let length = this.buffer[1] & 0x7f;
      let at = 2;
      if (length === 126) {
        if (this.buffer.length < 4) break;
        length = this.buffer.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) break;
        length = Number(this.buffer.readBigUInt64BE(2));
        at = 10;
      }
      if (this.buffer.length < at + length) break;
      const opcode = this.buffer[0] & 0x0f;
      const data = Buffer.from(this.buffer.subarray(at, at + length));
      this.buffer = this.buffer.subarray(at + length);
      if (opcode === 0x8) this.closeStatus = data.length >= 2 ? data.readUInt16BE(0) : undefined;
      else this.messages.push({ opcode, data });
    }
    this.wake();
  }
}

function assertUnmasked(second: number): void {
  if ((second & 0x80) !== 0) throw new Error('a server frame is masked');
}

/**
 * Opens `path` on the plain HTTP server at `url` as a WebSocket. `protocols`: the
 * Sec-WebSocket-Protocol header (none when undefined); `headers` replace or (as undefined) drop
 * the handshake's own.
 */
export async function openWebSocket(url: string, path: string, protocols?: string, headers: Record<string, string | undefined> = {}): Promise<WebSocketClient> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const key = randomBytes(16).toString('base64');
  const all: Record<string, string | undefined> = {
    Host: `${hostname}:${port}`,
    Connection: 'Upgrade',
    Upgrade: 'websocket',
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Key': key,
    ...(protocols === undefined ? {} : { 'Sec-WebSocket-Protocol': protocols }),
    ...headers,
  };
  const lines = Object.entries(all)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const client = new WebSocketClient(socket, key);
  socket.write(`GET ${path} HTTP/1.1\r\n${lines}\r\n`);
  return client;
}
