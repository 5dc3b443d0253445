/**
 * Ties a server's life to the process that launched it.
 *
 * The harness starts servers in their own process group (so a terminal's Ctrl-C reaches only the
 * harness, which then stops them in order) and sets LAB_LIFELINE=stdin with a pipe on stdin that
 * it never writes to. If the harness dies without cleaning up (even by SIGKILL), the pipe closes,
 * stdin ends, and the server shuts itself down: nothing is left running.
 * Started by hand from a terminal, a server has no lifeline and runs until Ctrl-C.
 */

/** Calls `shutdown` once when the launcher is gone. Does nothing unless LAB_LIFELINE=stdin. */
export function exitWithLauncher(shutdown: () => void): void {
  if (process.env.LAB_LIFELINE !== 'stdin') return;
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    shutdown();
  };
  process.stdin.on('end', once);
  process.stdin.on('close', once);
  process.stdin.on('error', once);
  process.stdin.resume();
}
