/**
 * An upload the way curl sends a large body (lesson 9): the headers with `Expect: 100-continue`,
 * then the body only once the server answers 100 Continue; a final answer instead (413) means
 * the body is never sent. Written on a plain socket because undici supports Expect only over
 * HTTP/2. Stamps the client's stages (µs, the shared clock): request-start, connect,
 * request-written (as the headers go to the kernel), body-written (as the body's last chunk does,
 * when the body is sent), response-headers-parsed (the final answer's head), last-byte.
 * RFC 9110 §10.1.1 (Expect).
 */
import net from 'node:net';
import { KitError } from '../../../lib/errors.ts';
import { drainOrClose } from '../../../servers/lib/serve/http.ts';
import { HOST } from '../../../lib/ready.ts';
import { nowUs, type StageEvent } from '../../../servers/lib/stages/stamps.ts';

interface Uploaded {
  status: number;
  events: StageEvent[];
  bodyBytesSent: number;
}

const CHUNK = 64 * 1024;

/**
 * Writes `bytes` zero bytes in chunks, waiting for 'drain' when the socket says to, and calls
 * `beforeLast` just before writing the last chunk.
 */
async function writeBody(socket: net.Socket, bytes: number, beforeLast: () => void): Promise<number> {
  const chunk = Buffer.alloc(CHUNK);
  let sent = 0;
  while (sent < bytes && !socket.destroyed) {
    const n = Math.min(CHUNK, bytes - sent);
    sent += n;
    if (sent === bytes) beforeLast();
    if (!socket.write(n === CHUNK ? chunk : chunk.subarray(0, n))) await drainOrClose(socket);
  }
  return sent;
}

/** A response's head and how much of it has come: the head's end and its Content-Length, once known. */
function parseHead(text: string): { status: number; headEnd: number; length: number | undefined } | undefined {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headEnd + 2))?.[1];
  return { status, headEnd, length: length === undefined ? undefined : Number(length) };
}

/**
 * POSTs `bytes` to 127.0.0.1:`port``path` with Expect: 100-continue and reads the final answer.
 * Throws KIT_ERR_REQUEST when the connection fails, closes before the answer, or no answer comes
 * within `timeoutMs`.
 */
export function upload(port: number, path: string, bytes: number, timeoutMs = 10_000): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const events: StageEvent[] = [{ stage: 'request-start', atUs: nowUs() }];
    const stamp = (stage: string) => events.push({ stage, atUs: nowUs() });
    let text = '';
    let bodyBytesSent = 0;
    let sending: Promise<void> = Promise.resolve();
    let settled = false;
    const socket = net.connect({ port, host: HOST });
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      reject(new KitError('KIT_ERR_REQUEST', `upload to ${HOST}:${port}${path} ${why}`));
    };
    const timer = setTimeout(() => fail(`had no answer within ${timeoutMs} ms`), timeoutMs);
    socket.on('error', (err) => fail(`failed: ${err.message}`));
    socket.on('close', () => fail('was closed before its answer'));
    socket.once('connect', () => {
      stamp('connect');
      // Stamped before the write, as in stage-client.ts: the server it wakes may run first.
      stamp('request-written');
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${HOST}:${port}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${bytes}\r\nExpect: 100-continue\r\n\r\n`,
      );
    });
    socket.on('data', (data: Buffer) => {
      text += data.toString('latin1');
      let head = parseHead(text);
      if (head?.status === 100) {
        text = text.slice(head.headEnd + 4);
        sending = writeBody(socket, bytes, () => stamp('body-written')).then((n) => void (bodyBytesSent = n));
        head = parseHead(text);
      }
      if (!head) return;
      if (!events.some((e) => e.stage === 'response-headers-parsed')) stamp('response-headers-parsed');
      if (head.length === undefined || text.length < head.headEnd + 4 + head.length) return;
      stamp('last-byte');
      settled = true;
      clearTimeout(timer);
      void sending.then(() => {
        socket.end();
        events.sort((a, b) => a.atUs - b.atUs);
        resolve({ status: head.status, events, bodyBytesSent });
      });
    });
  });
}
