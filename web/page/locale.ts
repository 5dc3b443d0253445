/**
 * Imported first by the page, before uPlot: uPlot builds `new Intl.NumberFormat(navigator.language)`
 * when its module loads, and that throws a RangeError for a tag that is not BCP 47. WebKitGTK 2.50
 * with LANG=C.UTF-8 (the default of Debian's and Docker's images) reports navigator.language as
 * "C", and the page would stop before its first line ran. Such a browser gets "en-US" instead; a
 * valid tag is left alone.
 */
function validTag(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

if (!validTag(navigator.language)) Object.defineProperty(navigator, 'language', { value: 'en-US', configurable: true });
