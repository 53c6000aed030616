/**
 * Text inside the diagrams: how wide a label is, and a label cut to fit a box. SVG text does not
 * wrap or clip itself, and the server cannot measure fonts, so widths are estimated for the
 * diagrams' 12px sans-serif from a few classes of character, each at about its width in the
 * widest common UI fonts, so estimates err wide and text stays inside its box.
 */

const NARROW = new Set([..." !'(),-./:;I[\\]`fijlrt{|}"]);
const BROAD = new Set([..."#%&+<=>@MW^mw~"]);
/** The ellipsis a cut label ends with. */
const ELLIPSIS_PX = 12;

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    cp >= 0x20000
  );
}

/** Estimated pixels of one character at 12px. */
function charPx(ch: string): number {
  const cp = ch.codePointAt(0)!;
  if (NARROW.has(ch)) return 4.8;
  if (BROAD.has(ch)) return 10.5;
  if (cp >= 65 && cp <= 90) return 8.6;
  if (isWide(cp)) return 12;
  return 7.4;
}

/** Estimated width of `text` in pixels. */
export function textWidth(text: string): number {
  let px = 0;
  for (const ch of text) px += charPx(ch);
  return Math.ceil(px);
}

/** `text` cut to at most `max` pixels wide (estimated), ending in "…" when cut; never splits a character. */
export function clipToWidth(text: string, max: number): string {
  if (textWidth(text) <= max) return text;
  if (max < ELLIPSIS_PX) return "";
  let px = 0;
  let end = 0;
  for (const ch of text) {
    px += charPx(ch);
    if (px > max - ELLIPSIS_PX) break;
    end += ch.length;
  }
  return `${text.slice(0, end).trimEnd()}…`;
}

/** A number as a person reads it: at most two decimals, no trailing zeros. */
export const formatNumber = (n: number) => String(Number(n.toFixed(2)));

/** "1 node", "3 nodes". */
export const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
