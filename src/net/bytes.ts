/** Byte arrays read in pieces (request bodies, fetched bodies, inflated streams, stored chunks). */

/** Pieces as one array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.byteLength;
  }
  return all;
}
