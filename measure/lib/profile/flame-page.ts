/**
 * A flame graph page for one profile: speedscope (github.com/jlfwong/speedscope, MIT), its release
 * build inlined with the profile, so the page is one file that opens from disk in any browser,
 * offline. speedscope reads V8's `.cpuprofile` as it is, and draws the same profile three ways: in
 * time order, "left heavy" (the flame graph: each function's callees side by side, widest first)
 * and as a sandwich (callers and callees of one function). Chosen because it is kept up (1.25.0,
 * December 2025), needs no server, and reads a `.cpuprofile` without conversion; 0x draws its own
 * graphs but cannot profile a cluster (davidmarkclements/0x).
 *
 * The profile is handed over as speedscope's own command line does it: with `#localProfilePath=`
 * in the address, speedscope defines `window.speedscope.loadFileFromBase64`, then adds a script
 * element for that path, whose code calls it. The page has no such file: it takes that one script
 * element in and makes the call itself, so nothing is fetched and nothing fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** speedscope's release build: its one script and one stylesheet. */
function speedscopeBuild(): { js: string; css: string } {
  const dir = path.join(
    path.dirname(createRequire(import.meta.url).resolve('speedscope/package.json')),
    'dist',
    'release',
  );
  const files = readdirSync(dir);
  const pick = (pattern: RegExp) => {
    const f = files.find((x) => pattern.test(x));
    if (!f) throw new Error(`speedscope's build has no file matching ${pattern} in ${dir}`);
    return readFileSync(path.join(dir, f), 'utf8');
  };
  // The stylesheet's font (Source Code Pro) goes inline too, as a data: URL, so nothing is fetched.
  const css = pick(/^speedscope-[\w-]+\.css$/).replace(/url\("\.\/([\w.-]+\.woff2)"\)/g, (_, font: string) => {
    const data = readFileSync(path.join(dir, font)).toString('base64');
    return `url("data:font/woff2;base64,${data}")`;
  });
  return { js: pick(/^speedscope-[\w-]+\.js$/), css };
}

/** `</script` inside inlined code would end the script element early. */
const inline = (code: string) => code.replace(/<\/(script|style)/gi, '<\\/$1');

/**
 * The page: `title` in the tab, `fileName` as speedscope names the profile, `profileJson` the
 * `.cpuprofile` text. It loads nothing from the network.
 */
export function flameGraphPage(title: string, fileName: string, profileJson: string): string {
  const { js, css } = speedscopeBuild();
  const base64 = Buffer.from(profileJson).toString('base64');
  return `<!DOCTYPE html>
<html>
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${title.replace(/[<&]/g, (c) => (c === '<' ? '&lt;' : '&amp;'))} · flame graph</title>
<style>${inline(css)}</style>
<script>
if (!location.hash.includes('localProfilePath')) history.replaceState(null, '', '#localProfilePath=inline&view=left-heavy');
(function () {
  var append = document.head.appendChild.bind(document.head);
  document.head.appendChild = function (el) {
    if (el.tagName !== 'SCRIPT' || el.src.slice(-7) !== '/inline' || !window.speedscope) return append(el);
    // After speedscope's own start-up has finished, as a loaded script's call would come.
    setTimeout(function () { window.speedscope.loadFileFromBase64(${JSON.stringify(fileName)}, ${JSON.stringify(base64)}); });
    return el;
  };
})();
</script>
</head>
<body>
<script>${inline(js)}</script>
</body>
</html>
`;
}
