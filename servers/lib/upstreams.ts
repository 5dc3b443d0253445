/** The `--upstream` flag both balancers take. */
import { KitError } from '../../lib/errors.ts';

/**
 * Parses comma-separated `[name=]host:port` items; hosts must be loopback (127.x.x.x or
 * localhost), since the kit never sends load anywhere else. Throws KIT_ERR_USAGE.
 */
export function parseUpstreamList(text: string | undefined): { name: string; addr: string }[] {
  if (!text) throw new KitError('KIT_ERR_USAGE', '--upstream is required: the replicas as host:port,host:port');
  return text.split(',').map((item, i) => {
    const m = /^(?:([\w.-]+)=)?(127\.\d+\.\d+\.\d+|localhost):(\d{1,5})$/.exec(item.trim());
    if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535) {
      throw new KitError('KIT_ERR_USAGE', `bad upstream '${item}': write host:port with a loopback host (127.x.x.x), e.g. 127.0.0.1:3010`);
    }
    return { name: m[1] ?? `upstream${i + 1}`, addr: `${m[2]}:${m[3]}` };
  });
}
