/**
 * Cutting text to fit a field: one rule everywhere, so a cut always ends in "…" and never runs
 * past `max` (the ellipsis counts).
 */
import { z } from "zod";

/** `text` cut to at most `max` UTF-16 units, the last one "…" when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * `text` cut to at most `max` code points, the last one "…" when cut: for text shown whole to a
 * person (search hits), where a cut between the halves of a surrogate pair would leave a broken character.
 */
export function clipCodePoints(text: string, max: number): string {
  const points = [...text];
  return points.length <= max ? text : `${points.slice(0, max - 1).join("")}…`;
}

/** A string a model wrote, clipped (see clip) rather than refused when it runs long. */
export const clippedString = (max: number) => z.string().transform((s) => clip(s, max));
