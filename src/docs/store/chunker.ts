/**
 * Content-defined chunking (FastCDC with normalized chunking). Cut points depend only on the
 * bytes near them, so an insertion or deletion moves the boundaries of the chunk it lands in and
 * the boundaries after it are found again: an edited large document shares all but a chunk or two
 * with its previous version.
 */

export const MIN_CHUNK_BYTES = 16 * 1024;
export const AVG_CHUNK_BYTES = 64 * 1024;
export const MAX_CHUNK_BYTES = 256 * 1024;

export interface ChunkSizes {
  min: number;
  avg: number;
  max: number;
}

export interface ChunkSpan {
  offset: number;
  length: number;
}

/**
 * The gear table is fixed forever: changing it would move every cut point, and stored documents
 * would stop sharing chunks with new versions of themselves. SplitMix32 from a constant seed gives
 * well-mixed values without shipping 256 literals.
 */
const GEAR: Uint32Array = (() => {
  const table = new Uint32Array(256);
  let state = 0x9e3779b9;
  for (let i = 0; i < 256; i++) {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    table[i] = (z ^ (z >>> 16)) >>> 0;
  }
  return table;
})();

/**
 * A mask of `bits` ones in the high end of the word: with a shift-left gear hash the high bits
 * mix the most recent 32 bytes, the low bits only the last few.
 */
const highMask = (bits: number): number => (bits <= 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0);

function assertSizes({ min, avg, max }: ChunkSizes): void {
  if (!(Number.isInteger(min) && Number.isInteger(avg) && Number.isInteger(max) && min >= 64 && min <= avg && avg <= max)) {
    throw new RangeError(`chunk sizes must satisfy 64 <= min <= avg <= max (got ${min}/${avg}/${max})`);
  }
}

/** The length of the chunk that starts at `start`. */
function cutPoint(data: Uint8Array, start: number, sizes: ChunkSizes, maskS: number, maskL: number): number {
  let n = data.length - start;
  if (n <= sizes.min) return n;
  if (n > sizes.max) n = sizes.max;
  const normal = Math.min(sizes.avg, n);
  let h = 0;
  let i = sizes.min;
  // Below the average size a harder mask makes a cut less likely, above it an easier one more
  // likely: chunk sizes cluster around the average instead of spreading geometrically.
  for (; i < normal; i++) {
    h = ((h << 1) + GEAR[data[start + i]!]!) >>> 0;
    if ((h & maskS) === 0) return i + 1;
  }
  for (; i < n; i++) {
    h = ((h << 1) + GEAR[data[start + i]!]!) >>> 0;
    if ((h & maskL) === 0) return i + 1;
  }
  return n;
}

/** Splits `data` into content-defined spans covering it in order; below `min` bytes it is one span. */
export function chunkSpans(data: Uint8Array, sizes: ChunkSizes = { min: MIN_CHUNK_BYTES, avg: AVG_CHUNK_BYTES, max: MAX_CHUNK_BYTES }): ChunkSpan[] {
  assertSizes(sizes);
  const bits = Math.round(Math.log2(sizes.avg));
  const maskS = highMask(bits + 2);
  const maskL = highMask(bits - 2);
  const spans: ChunkSpan[] = [];
  if (data.length === 0) return [{ offset: 0, length: 0 }];
  let offset = 0;
  while (offset < data.length) {
    const length = cutPoint(data, offset, sizes, maskS, maskL);
    spans.push({ offset, length });
    offset += length;
  }
  return spans;
}
