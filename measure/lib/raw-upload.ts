/**
 * An upload the way curl sends a large body (lesson 7): the headers with `Expect: 100-continue`,
 * then the body only once the server answers 100 Continue; a final answer instead (413) means
 * the body is never sent. Written on a plain socket because undici supports Expect only over
 * HTTP/2. Stamps the client's stages (µs, the shared clock): request-start, connect,
 * request-written (as the headers, or the body's last chunk when it is sent, go to the kernel),
 * first-response-byte (of the final answer), last-byte. RFC 9110 §10.1.1 (Expect).
 */
import net from 'node:net';
import { KitError } from '../../lib/errors.ts';
import { HOST } from '../../lib/ready.ts';
import { nowUs, type StageEvent } from '../../servers/lib/stage-stamps.ts';

export interface Uploaded {
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
    const ok = socket.write(n === CHUNK ? chunk : chunk.subarray(0, n));
    if (!ok) await new Promise((resolve) => socket.once('drain', resolve));
  }
  return sent;
}

/**
 * POSTs `bytes` to 127.0.0.1:`port``path` with Expect: 100-continue and reads the final answer.
 * Throws KIT_ERR_REQUEST when the connection fails or no answer comes within `timeoutMs`.
 */
export function upload(port: number, path: string, bytes: number, timeoutMs = 10_000): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const events: StageEvent[] = [{ stage: 'request-start', atUs: nowUs() }];
    let text = '';
    let bodyBytesSent = 0;
    let finalAt = -1;
    let sending: Promise<void> | undefined;
    const socket = net.connect({ port, host: HOST });
    const fail = (why: string) => {
      socket.destroy();
      reject(new KitError('KIT_ERR_REQUEST', `upload to ${HOST}:${port}${path} ${why}`));
    };
    const timer = setTimeout(() => fail(`had no answer within ${timeoutMs} ms`), timeoutMs);
    socket.on('error', (err) => fail(`failed: ${err.message}`));
    socket.once('connect', () => {
      events.push({ stage: 'connect', atUs: nowUs() });
      const head = `POST ${path} HTTP/1.1\r\nHost: ${HOST}:${port}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${bytes}\r\nExpect: 100-continue\r\n\r\n`;
      // Stamped before the write, as in stage-client.ts: the server it wakes may run first.
      events.push({ stage: 'request-written', atUs: nowUs() });
      socket.write(head);
    });
    socket.on('data', (data: Buffer) => {
      const at = nowUs();
      text += data.toString('latin1');
      if (finalAt < 0 && text.startsWith('HTTP/1.1 100')) {
        const end = text.indexOf('\r\n\r\n');
        if (end < 0) return;
        text = text.slice(end + 4);
        const headWritten = events.findIndex((e) => e.stage === 'request-written');
        if (headWritten >= 0) events.splice(headWritten, 1); // written only once its body is
        sending = writeBody(socket, bytes, () => events.push({ stage: 'request-written', atUs: nowUs() })).then((n) => {
          bodyBytesSent = n;
        });
        if (text === '') return;
      }
      if (finalAt < 0 && text.length > 0) {
        finalAt = at;
        events.push({ stage: 'first-response-byte', atUs: at });
      }
      const headEnd = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
      if (headEnd < 0 || length === undefined || text.length < headEnd + 4 + Number(length)) return;
      events.push({ stage: 'last-byte', atUs: at });
      clearTimeout(timer);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      void (sending ?? Promise.resolve()).then(() => {
        socket.end();
        events.sort((a, b) => a.atUs - b.atUs);
        resolve({ status, events, bodyBytesSent });
      });
    });
  });
}
