/**
 * Request bodies at the edge: each route states its cap, and a body is refused before it is
 * parsed (docs/limits.md).
 */
import { MAX_ARG_BYTES } from "../core/bounds";
import { concatBytes } from "../net/bytes";

/**
 * Most MCP messages are a few kilobytes; the largest legitimate one carries a tool's largest
 * arguments (an inline 1 MiB file in base64, a batch_commit), which the registry caps at
 * MAX_ARG_BYTES, plus the JSON-RPC envelope around them.
 */
export const MAX_MCP_BODY_BYTES = MAX_ARG_BYTES + 64 * 1024;
/** GitHub caps webhook payloads at 25 MB; anything GitHub can send must fit (read generously as MiB). */
export const MAX_WEBHOOK_BODY_BYTES = 25 * 1024 * 1024;

/** True when the request declares a body larger than `max`, so it can be refused without reading a byte. */
export function declaredTooLarge(req: Request, max: number): boolean {
  const declared = Number(req.headers.get("content-length") ?? 0);
  return Number.isFinite(declared) && declared > max;
}

/**
 * The body's bytes, or null as soon as more than `max` bytes have arrived. Content-Length can be
 * absent (a chunked body) or wrong, so the bytes actually read are counted too, and the rest of
 * an oversized stream is cancelled rather than buffered.
 */
export async function readCapped(req: Request, max: number): Promise<Uint8Array | null> {
  if (declaredTooLarge(req, max)) return null;
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return concatBytes(chunks);
}

/** "1 MiB", "25 MiB": how a cap reads in an error message. */
export const mebibytes = (bytes: number): string => `${+(bytes / (1024 * 1024)).toFixed(2)} MiB`;
