/**
 * Loans held in flight, for a check of a stop: each sent on a connection of its own with
 * `Expect: 100-continue`, so that the server's `100 Continue` says it has the request and its
 * handler is waiting for the body; the bodies are sent later, when the caller says. Written on a
 * plain socket, as raw-upload.ts is, because undici supports Expect only over HTTP/2.
 * RFC 9110 §10.1.1 (Expect).
 */
import net from 'node:net';
import { HOST } from '../../../lib/ready.ts';

/** What a held loan got once its body was sent: a status and a body, or why there was none. */
export type HeldAnswer = { status: number; body: string } | { error: string };

/** One loan held: resolves `held` at the server's 100 Continue; `release()` sends the body and reads the answer. */
interface HeldLoan {
  held: Promise<void>;
  release(): Promise<HeldAnswer>;
}

/** A response's head and body, once all of it has come (Content-Length), or undefined before. */
function complete(text: Buffer): { status: number; body: string } | undefined {
  const s = text.toString('latin1');
  const end = s.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(s.slice(0, end + 2))?.[1] ?? NaN);
  if (!Number.isFinite(length) || text.length < end + 4 + length) return undefined;
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(s)?.[1] ?? 0);
  return { status, body: text.subarray(end + 4, end + 4 + length).toString('utf8') };
}

/** Sends POST `path` with `json` held at its head on 127.0.0.1:`port`; every step bounded by `timeoutMs`. */
export function holdLoan(port: number, path: string, json: unknown, timeoutMs = 5000): HeldLoan {
  const body = Buffer.from(JSON.stringify(json));
  const socket = net.connect(port, HOST);
  socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
  let got = Buffer.alloc(0);
  let onData: () => void = () => {};
  let failed: Error | undefined;
  socket.on('data', (d: Buffer) => {
    got = Buffer.concat([got, d]);
    onData();
  });
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.once('error', (err) => (failed = err));
  socket.once('connect', () =>
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    ),
  );
  const held = new Promise<void>((resolve, reject) => {
    onData = () => {
      const s = got.toString('latin1');
      const end = s.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!/^HTTP\/1\.1 100 /.test(s)) return reject(new Error(`answered before the body: ${s.slice(0, 40)}`));
      got = got.subarray(end + 4);
      onData = () => {};
      resolve();
    };
    void ended.then(() => reject(failed ?? new Error('the connection closed before 100 Continue')));
  });
  held.catch(() => {}); // a loan that was never held is reported by release()
  return {
    held,
    release: () =>
      new Promise<HeldAnswer>((resolve) => {
        const finish = (a: HeldAnswer) => {
          socket.destroy();
          resolve(a);
        };
        onData = () => {
          const answer = complete(got);
          if (answer) finish(answer);
        };
        void ended.then(() =>
          finish({
            error: failed ? `the connection failed (${failed.message})` : 'the connection closed with no answer',
          }),
        );
        if (!socket.destroyed) socket.write(body);
        onData();
      }),
  };
}
