/**
 * A SPDY/3.1 server connection, as much of it as kube's streaming protocols use (moby/spdystream on
 * the client's side: kube-apiserver talking to a kubelet, client-go talking through a server): the
 * client opens streams with SYN_STREAM (their headers in one zlib stream per direction with SPDY's
 * dictionary, flushed at each header block), this side answers each with SYN_REPLY and both send
 * DATA frames (FIN ends a direction); PING is answered; SETTINGS, WINDOW_UPDATE and HEADERS are read
 * and otherwise ignored (no flow control: kube's exchanges are small). close() ends every stream,
 * sends GOAWAY and ends the socket.
 */
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';

/** SPDY/3's header compression dictionary (spdystream's headerDictionary, from the SPDY/3 draft). */
export const SPDY_DICTIONARY = Buffer.from('AAAAB29wdGlvbnMAAAAEaGVhZAAAAARwb3N0AAAAA3B1dAAAAAZkZWxldGUAAAAFdHJhY2UAAAAGYWNjZXB0AAAADmFjY2VwdC1jaGFyc2V0AAAAD2FjY2VwdC1lbmNvZGluZwAAAA9hY2NlcHQtbGFuZ3VhZ2UAAAANYWNjZXB0LXJhbmdlcwAAAANhZ2UAAAAFYWxsb3cAAAANYXV0aG9yaXphdGlvbgAAAA1jYWNoZS1jb250cm9sAAAACmNvbm5lY3Rpb24AAAAMY29udGVudC1iYXNlAAAAEGNvbnRlbnQtZW5jb2RpbmcAAAAQY29udGVudC1sYW5ndWFnZQAAAA5jb250ZW50LWxlbmd0aAAAABBjb250ZW50LWxvY2F0aW9uAAAAC2NvbnRlbnQtbWQ1AAAADWNvbnRlbnQtcmFuZ2UAAAAMY29udGVudC10eXBlAAAABGRhdGUAAAAEZXRhZwAAAAZleHBlY3QAAAAHZXhwaXJlcwAAAARmcm9tAAAABGhvc3QAAAAIaWYtbWF0Y2gAAAARaWYtbW9kaWZpZWQtc2luY2UAAAANaWYtbm9uZS1tYXRjaAAAAAhpZi1yYW5nZQAAABNpZi11bm1vZGlmaWVkLXNpbmNlAAAADWxhc3QtbW9kaWZpZWQAAAAIbG9jYXRpb24AAAAMbWF4LWZvcndhcmRzAAAABnByYWdtYQAAABJwcm94eS1hdXRoZW50aWNhdGUAAAATcHJveHktYXV0aG9yaXphdGlvbgAAAAVyYW5nZQAAAAdyZWZlcmVyAAAAC3JldHJ5LWFmdGVyAAAABnNlcnZlcgAAAAJ0ZQAAAAd0cmFpbGVyAAAAEXRyYW5zZmVyLWVuY29kaW5nAAAAB3VwZ3JhZGUAAAAKdXNlci1hZ2VudAAAAAR2YXJ5AAAAA3ZpYQAAAAd3YXJuaW5nAAAAEHd3dy1hdXRoZW50aWNhdGUAAAAGbWV0aG9kAAAAA2dldAAAAAZzdGF0dXMAAAAGMjAwIE9LAAAAB3ZlcnNpb24AAAAISFRUUC8xLjEAAAADdXJsAAAABnB1YmxpYwAAAApzZXQtY29va2llAAAACmtlZXAtYWxpdmUAAAAGb3JpZ2luMTAwMTAxMjAxMjAyMjA1MjA2MzAwMzAyMzAzMzA0MzA1MzA2MzA3NDAyNDA1NDA2NDA3NDA4NDA5NDEwNDExNDEyNDEzNDE0NDE1NDE2NDE3NTAyNTA0NTA1MjAzIE5vbi1BdXRob3JpdGF0aXZlIEluZm9ybWF0aW9uMjA0IE5vIENvbnRlbnQzMDEgTW92ZWQgUGVybWFuZW50bHk0MDAgQmFkIFJlcXVlc3Q0MDEgVW5hdXRob3JpemVkNDAzIEZvcmJpZGRlbjQwNCBOb3QgRm91bmQ1MDAgSW50ZXJuYWwgU2VydmVyIEVycm9yNTAxIE5vdCBJbXBsZW1lbnRlZDUwMyBTZXJ2aWNlIFVuYXZhaWxhYmxlSmFuIEZlYiBNYXIgQXByIE1heSBKdW4gSnVsIEF1ZyBTZXB0IE9jdCBOb3YgRGVjIDAwOjAwOjAwIE1vbiwgVHVlLCBXZWQsIFRodSwgRnJpLCBTYXQsIFN1biwgR01UY2h1bmtlZCx0ZXh0L2h0bWwsaW1hZ2UvcG5nLGltYWdlL2pwZyxpbWFnZS9naWYsYXBwbGljYXRpb24veG1sLGFwcGxpY2F0aW9uL3hodG1sK3htbCx0ZXh0L3BsYWluLHRleHQvamF2YXNjcmlwdCxwdWJsaWNwcml2YXRlbWF4LWFnZT1nemlwLGRlZmxhdGUsc2RjaGNoYXJzZXQ9dXRmLThjaGFyc2V0PWlzby04ODU5LTEsdXRmLSwqLGVucT0wLg==', 'base64');

const FLAG_FIN = 0x01;
const TYPE_SYN_STREAM = 1;
const TYPE_SYN_REPLY = 2;
const TYPE_RST_STREAM = 3;
const TYPE_PING = 6;
const TYPE_GOAWAY = 7;
const TYPE_HEADERS = 8;

/** One zlib stream in one direction; each call is one header block, flushed (Z_SYNC_FLUSH). */
class HeaderCodec {
  private out: Buffer[] = [];
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly z: zlib.Inflate | zlib.Deflate) {
    z.on('data', (d: Buffer) => this.out.push(d));
    z.on('error', () => undefined);
  }

  run(block: Buffer): Promise<Buffer> {
    const next = this.chain.then(
      () =>
        new Promise<Buffer>((resolve) => {
          this.z.write(block);
          this.z.flush(zlib.constants.Z_SYNC_FLUSH, () => {
            const result = Buffer.concat(this.out);
            this.out = [];
            resolve(result);
          });
        }),
    );
    this.chain = next.catch(() => undefined);
    return next;
  }
}

/** Headers of a SPDY/3 name/value block (names lower-case; several values joined by NUL). */
export function parseHeaderBlock(raw: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 4;
  const count = raw.length >= 4 ? raw.readUInt32BE(0) : 0;
  for (let i = 0; i < count && at + 4 <= raw.length; i++) {
    const nameLength = raw.readUInt32BE(at);
    const name = raw.subarray(at + 4, at + 4 + nameLength).toString('utf8');
    at += 4 + nameLength;
    const valueLength = raw.readUInt32BE(at);
    out[name.toLowerCase()] = raw.subarray(at + 4, at + 4 + valueLength).toString('utf8');
    at += 4 + valueLength;
  }
  return out;
}

/** A name/value block of SPDY/3, uncompressed. */
export function headerBlock(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [Buffer.alloc(4)];
  parts[0].writeUInt32BE(Object.keys(headers).length);
  for (const [name, value] of Object.entries(headers)) {
    for (const s of [name.toLowerCase(), value]) {
      const b = Buffer.from(s);
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length);
      parts.push(len, b);
    }
  }
  return Buffer.concat(parts);
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE((0x8000 | 3) * 0x10000 + type);
  head.writeUInt32BE(flags * 0x1000000 + payload.length, 4);
  return Buffer.concat([head, payload]);
}

function dataFrame(streamId: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff);
  head.writeUInt32BE(flags * 0x1000000 + payload.length, 4);
  return Buffer.concat([head, payload]);
}

/** A stream the client opened. */
export class SpdyStream {
  private finished = false;
  /** Called with each DATA payload the client sends, and with null at its FIN. */
  onData: (data: Buffer | null) => void = () => undefined;

  constructor(
    private readonly conn: SpdyConnection,
    readonly id: number,
    readonly headers: Record<string, string>,
  ) {}

  write(data: Buffer): void {
    if (this.finished) return;
    for (let at = 0; at < data.length; at += 16384) this.conn.send(dataFrame(this.id, 0, data.subarray(at, at + 16384)));
  }

  /** Ends this side of the stream (an empty DATA frame with FIN). */
  end(): void {
    if (this.finished) return;
    this.finished = true;
    this.conn.send(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
  }
}

/** The server side of a SPDY/3.1 connection on `socket` (after the HTTP upgrade); `onStream` gets each stream once it was answered. */
export class SpdyConnection {
  private buffer = Buffer.alloc(0);
  private readonly inflate = new HeaderCodec(zlib.createInflate({ dictionary: SPDY_DICTIONARY }));
  private readonly deflate = new HeaderCodec(zlib.createDeflate({ dictionary: SPDY_DICTIONARY, level: 9 }));
  private readonly streams = new Map<number, SpdyStream>();
  private chain: Promise<void> = Promise.resolve();
  private lastStreamId = 0;
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    head: Buffer,
    private readonly onStream: (stream: SpdyStream) => void,
    private readonly onClose: () => void = () => undefined,
  ) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('close', () => this.gone());
    socket.on('error', () => this.gone());
    if (head.length > 0) this.receive(head);
  }

  send(frame: Buffer): void {
    if (!this.closed) this.socket.write(frame);
  }

  /** Ends every stream, says GOAWAY and ends the connection. */
  close(): void {
    if (this.closed) return;
    for (const s of this.streams.values()) s.end();
    const goaway = Buffer.alloc(8);
    goaway.writeUInt32BE(this.lastStreamId);
    this.send(controlFrame(TYPE_GOAWAY, 0, goaway));
    this.closed = true;
    this.socket.end();
  }

  private gone(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.onData(null);
    this.onClose();
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 8) {
      const length = this.buffer.readUInt32BE(4) & 0xffffff;
      if (this.buffer.length < 8 + length) return;
      const frame = this.buffer.subarray(0, 8 + length);
      this.buffer = this.buffer.subarray(8 + length);
      // In order: header blocks share one zlib stream.
      this.chain = this.chain.then(() => this.handle(frame)).catch(() => this.close());
    }
  }

  private async handle(frame: Buffer): Promise<void> {
    const first = frame.readUInt32BE(0);
    const flags = frame[4];
    const payload = frame.subarray(8);
    if ((first & 0x80000000) === 0) {
      const stream = this.streams.get(first & 0x7fffffff);
      if (stream === undefined) return;
      if (payload.length > 0) stream.onData(Buffer.from(payload));
      if (flags & FLAG_FIN) stream.onData(null);
      return;
    }
    const type = first & 0xffff;
    if (type === TYPE_SYN_STREAM) {
      const id = payload.readUInt32BE(0) & 0x7fffffff;
      const headers = parseHeaderBlock(await this.inflate.run(payload.subarray(10)));
      this.lastStreamId = Math.max(this.lastStreamId, id);
      const stream = new SpdyStream(this, id, headers);
      this.streams.set(id, stream);
      const reply = Buffer.alloc(4);
      reply.writeUInt32BE(id);
      this.send(controlFrame(TYPE_SYN_REPLY, 0, Buffer.concat([reply, await this.deflate.run(headerBlock({}))])));
      this.onStream(stream);
      if (flags & FLAG_FIN) stream.onData(null);
    } else if (type === TYPE_SYN_REPLY || type === TYPE_HEADERS) {
      await this.inflate.run(payload.subarray(4));
    } else if (type === TYPE_RST_STREAM) {
      const stream = this.streams.get(payload.readUInt32BE(0) & 0x7fffffff);
      stream?.onData(null);
    } else if (type === TYPE_PING) {
      this.send(frame);
    } else if (type === TYPE_GOAWAY) {
      this.close();
    }
  }
}
