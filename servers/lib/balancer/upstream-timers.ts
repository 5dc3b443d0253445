/**
 * The kit's balancer times a try as nginx does: proxy_connect_timeout while the connection is
 * being made, then, once the request is sent, the response timeout for its answer (nginx's
 * proxy_read_timeout starts when the request has been sent; nginx docs). undici has neither as
 * such: its connect timer has about half a second of slack at a second and above
 * (lib/util/timers.js), and an abort of a request still waiting for its connection takes effect
 * only once the connection is made or fails. So:
 *  - timedConnector: undici's connector (buildConnector) with a native timer of our own, which
 *    destroys a connection not made in time with undici's ConnectTimeoutError (UND_ERR_CONNECT_TIMEOUT);
 *  - requestWhenSent: pool.request that also says when the request went out on a connected socket,
 *    read from undici's diagnostics channels (undici docs, "Diagnostics Channel"):
 *    `undici:request:create` names the request object a call creates (synchronously, inside
 *    Pool#request), `undici:client:sendHeaders` fires as its headers are written.
 */
import diagnostics from 'node:diagnostics_channel';
import { buildConnector, errors, type Dispatcher, type Pool } from 'undici';

let creating: (() => void) | undefined;
const onSent = new WeakMap<object, () => void>();

diagnostics.subscribe('undici:request:create', (message) => {
  if (!creating) return; // another caller's request (fetch shares the channel names)
  onSent.set((message as { request: object }).request, creating);
  creating = undefined;
});
diagnostics.subscribe('undici:client:sendHeaders', (message) => {
  const request = (message as { request: object }).request;
  const sent = onSent.get(request);
  if (!sent) return;
  onSent.delete(request);
  sent();
});

/** pool.request(opts), calling `sent` once the request's headers go out on a connected socket. */
export function requestWhenSent(
  pool: Pool,
  opts: Dispatcher.RequestOptions,
  sent: () => void,
): Promise<Dispatcher.ResponseData> {
  creating = sent;
  try {
    return pool.request(opts);
  } finally {
    creating = undefined;
  }
}

/** A connector for undici's Pool `connect` option that gives up after `timeoutMs`, on time. */
export function timedConnector(timeoutMs: number): buildConnector.connector {
  const connect = buildConnector({ timeout: 0 }); // 0: no timer of undici's own (lib/core/connect.js);
  return (options, callback) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      socket.destroy();
      callback(
        new errors.ConnectTimeoutError(`connect timeout after ${timeoutMs} ms (${options.hostname}:${options.port})`),
        null,
      );
    }, timeoutMs);
    const socket = connect(options, (...args) => {
      clearTimeout(timer);
      if (settled) {
        args[1]?.destroy();
        return;
      }
      settled = true;
      callback(...args);
    }) as unknown as { destroy(): void };
  };
}
