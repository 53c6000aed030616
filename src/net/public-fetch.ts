/**
 * Fetching a caller-named URL without letting the caller aim the server at itself or its
 * neighbours (SSRF): https only, public hosts only, every redirect hop re-checked, a size cap
 * enforced while the body streams, and one deadline for the whole exchange.
 *
 * What this can and cannot promise: a Worker never learns which address its fetch connected to,
 * so the DNS check below (DNS over HTTPS, before each hop) narrows DNS rebinding but cannot close
 * it — a name may answer publicly here and privately a moment later. Production Workers cannot
 * reach private networks or the host's metadata service in any case; these checks matter where
 * the same code runs elsewhere (wrangler dev on a laptop, a self-hosted workerd) and keep the
 * server from being used to probe for such addresses.
 */
import { concatBytes } from "./bytes";
import { excerpt, ToolError } from "../core/errors";

export interface PublicFetchOptions {
  /** Largest body accepted, in bytes; more is refused without being kept. */
  maxBytes: number;
  /** Deadline for everything: DNS checks, every hop, and the whole body. */
  timeoutMs: number;
  /** Redirects followed before giving up. */
  maxRedirects: number;
}

export interface PublicFetchResult {
  /** The URL that answered with the body, after redirects. */
  finalUrl: string;
  status: number;
  /** The Content-Type header as sent (parameters included), or null. */
  contentType: string | null;
  bytes: Uint8Array;
}

export const DOH_ENDPOINT = "https://cloudflare-dns.com/dns-query";
const MAX_DOH_RESPONSE_BYTES = 64 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const notAllowed = (url: string, why: string, via?: string) =>
  new ToolError("url_not_allowed", `${via ? `Redirect from '${excerpt(via)}' to` : "URL"} '${excerpt(url)}' is not allowed: ${why}.`, {
    hint: via
      ? "The server only follows redirects to public https URLs; download the final URL yourself from a public location, or ask its owner to serve it publicly."
      : "Pass a public https URL (e.g. https://example.com/data.csv); local, private, link-local and metadata addresses and names are refused.",
  });

// ---------------------------------------------------------------------------------------------
// Addresses

/** Dotted-quad only: by the time a host reaches here the URL parser has rewritten 2130706433, 0x7f.1 and 0177.0.0.1 into it. */
export function parseIPv4(text: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** Any textual IPv6 form (`::` compression, an IPv4 tail, bracketed or not) to 16 bytes; null if it is not one. */
export function parseIPv6(raw: string): Uint8Array | null {
  let text = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
  if (text.includes("%")) return null;
  const lastColon = text.lastIndexOf(":");
  if (lastColon < 0) return null;
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = parseIPv4(tail);
    if (!v4) return null;
    text = `${text.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (s: string) => (s === "" ? [] : s.split(":"));
  const left = groupsOf(halves[0]!);
  const right = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if ([...left, ...right].some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  const missing = 8 - left.length - right.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...left, ...Array<string>(missing).fill("0"), ...right].map((g) => parseInt(g, 16));
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

/** Special-purpose IPv4 blocks (RFC 6890 and friends): nothing here is an ordinary public server. */
const V4_NOT_PUBLIC: Array<[number, number, number, number, number]> = [
  [0, 0, 0, 0, 8], // "this network"; 0.0.0.0 reaches the local host on many systems
  [10, 0, 0, 0, 8], // RFC 1918
  [100, 64, 0, 0, 10], // carrier-grade NAT
  [127, 0, 0, 0, 8], // loopback
  [169, 254, 0, 0, 16], // link-local, including cloud metadata at 169.254.169.254
  [172, 16, 0, 0, 12], // RFC 1918
  [192, 0, 0, 0, 24], // IETF protocol assignments
  [192, 0, 2, 0, 24], // documentation
  [192, 88, 99, 0, 24], // 6to4 relay anycast
  [192, 168, 0, 0, 16], // RFC 1918
  [198, 18, 0, 0, 15], // benchmarking
  [198, 51, 100, 0, 24], // documentation
  [203, 0, 113, 0, 24], // documentation
  [224, 0, 0, 0, 4], // multicast
  [240, 0, 0, 0, 4], // reserved, and broadcast 255.255.255.255
];

function inV4Block(ip: number[], [a, b, c, d, bits]: [number, number, number, number, number]): boolean {
  const asInt = (w: number, x: number, y: number, z: number) => ((w << 24) | (x << 16) | (y << 8) | z) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (asInt(ip[0]!, ip[1]!, ip[2]!, ip[3]!) & mask) >>> 0 === (asInt(a, b, c, d) & mask) >>> 0;
}

export function isPublicIPv4(ip: number[]): boolean {
  return !V4_NOT_PUBLIC.some((block) => inV4Block(ip, block));
}

/**
 * Public IPv6 is decided by allowing rather than refusing: only global unicast (2000::/3) passes,
 * which by itself excludes ::1, ::, IPv4-mapped and -compatible forms, NAT64 (64:ff9b::/96), ULA
 * fc00::/7, link-local fe80::/10 and multicast ff00::/8. Inside 2000::/3 the blocks that are not
 * ordinary servers or that tunnel to an IPv4 address (Teredo in 2001::/23, 6to4 2002::/16) are
 * refused too, so a private IPv4 address cannot come back wrapped in IPv6.
 */
export function isPublicIPv6(ip: Uint8Array): boolean {
  if ((ip[0]! & 0xe0) !== 0x20) return false;
  const g0 = (ip[0]! << 8) | ip[1]!;
  const g1 = (ip[2]! << 8) | ip[3]!;
  if (g0 === 0x2001 && g1 < 0x0200) return false; // 2001::/23 IETF protocol assignments (Teredo, ORCHID, …)
  if (g0 === 0x2001 && g1 === 0x0db8) return false; // documentation
  if (g0 === 0x2002) return false; // 6to4
  if ((g0 & 0xfff0) === 0x3ff0) return false; // 3ff0::/12 covers documentation 3fff::/20
  return true;
}

/** True when `text` is an IP address (either family) that is publicly routable. */
export function isPublicAddress(text: string): boolean {
  const v4 = parseIPv4(text);
  if (v4) return isPublicIPv4(v4);
  const v6 = parseIPv6(text);
  return v6 !== null && isPublicIPv6(v6);
}

// ---------------------------------------------------------------------------------------------
// URLs and names

/** Names that only mean something on a local network or this machine (RFC 6761, 6762, 8375, ICANN's .internal). */
const PRIVATE_SUFFIXES = ["localhost", "local", "internal", "intranet", "lan", "home", "corp", "private", "home.arpa", "arpa", "test", "invalid", "onion"];

/**
 * The checks that need no network: https only, no credentials, and a host that is neither a
 * non-public IP literal nor a local-only name. Returns the parsed URL; the host of a name still
 * needs resolvePublicHost.
 */
export function checkPublicUrl(raw: string, via?: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    if (via) throw notAllowed(raw, "the Location header is not a valid URL", via);
    throw new ToolError("invalid_input", `url '${excerpt(raw)}' is not a valid absolute URL`, {
      hint: "Pass a full https URL, e.g. https://example.com/data.csv.",
    });
  }
  // Credentials are never quoted back: a refused URL's message must not repeat its password.
  const redacted = new URL(url.href);
  redacted.username = "";
  redacted.password = "";
  const shown = redacted.href;
  if (url.protocol !== "https:") throw notAllowed(shown, `only https URLs are fetched, not ${url.protocol.replace(/:$/, "")}`, via);
  if (url.username !== "" || url.password !== "") throw notAllowed(shown, "URLs with credentials (user:password@) are refused", via);
  const host = url.hostname.toLowerCase();
  if (host.startsWith("[")) {
    const v6 = parseIPv6(host);
    if (!v6 || !isPublicIPv6(v6)) throw notAllowed(shown, `${host} is not a public IPv6 address`, via);
    return url;
  }
  const v4 = parseIPv4(host);
  if (v4) {
    if (!isPublicIPv4(v4)) throw notAllowed(shown, `${host} is a loopback, private, link-local or reserved address`, via);
    return url;
  }
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  if (!name.includes(".")) throw notAllowed(shown, `'${excerpt(name, 60)}' is a single-label name that only resolves on a local network`, via);
  if (PRIVATE_SUFFIXES.some((s) => name === s || name.endsWith(`.${s}`))) {
    throw notAllowed(shown, `'${excerpt(name, 60)}' is a local or internal name`, via);
  }
  return url;
}

interface DohAnswer {
  type?: number;
  data?: string;
}

async function readCapped(body: ReadableStream<Uint8Array> | null, max: number, signal: AbortSignal, tooLarge: (seen: number) => ToolError): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  // A stalled body must still end at the deadline, even when the stream ignores the fetch's signal.
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => {});
  const parts: Uint8Array[] = [];
  let total = 0;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), aborted]);
      if (done) break;
      total += value.byteLength;
      if (total > max) throw tooLarge(total);
      parts.push(value);
    }
    finished = true;
  } finally {
    signal.removeEventListener("abort", onAbort);
    if (!finished) reader.cancel().catch(() => {});
  }
  return concatBytes(parts);
}

async function dohLookup(name: string, type: "A" | "AAAA", signal: AbortSignal): Promise<{ status: number; addresses: string[] }> {
  const unresolved = (why: string) =>
    new ToolError("download_failed", `Could not check where '${excerpt(name, 60)}' points: ${why}.`, {
      hint: "The name is resolved over DNS-over-HTTPS before anything is fetched; retry in a moment.",
      retryable: true,
    });
  let res: Response;
  try {
    res = await fetch(`${DOH_ENDPOINT}?name=${encodeURIComponent(name)}&type=${type}`, {
      headers: { accept: "application/dns-json" },
      redirect: "manual",
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw unresolved("the DNS resolver could not be reached");
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    throw unresolved(`the DNS resolver answered HTTP ${res.status}`);
  }
  const raw = await readCapped(res.body, MAX_DOH_RESPONSE_BYTES, signal, () => unresolved("the DNS answer was too large"));
  let parsed: { Status?: number; Answer?: DohAnswer[] };
  try {
    parsed = JSON.parse(new TextDecoder().decode(raw)) as typeof parsed;
  } catch {
    throw unresolved("the DNS answer was not JSON");
  }
  const wanted = type === "A" ? 1 : 28;
  const addresses = (parsed.Answer ?? []).filter((a) => a.type === wanted && typeof a.data === "string").map((a) => a.data!);
  return { status: typeof parsed.Status === "number" ? parsed.Status : -1, addresses };
}

/**
 * Resolves a host name's A and AAAA records over DNS-over-HTTPS and refuses it unless every
 * address is public: one private answer among public ones is enough for a resolver to pick it.
 */
export async function resolvePublicHost(url: URL, signal: AbortSignal, via?: string): Promise<void> {
  const host = url.hostname.toLowerCase();
  if (host.startsWith("[") || parseIPv4(host)) return; // literals were judged by checkPublicUrl
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  const [a, aaaa] = await Promise.all([dohLookup(name, "A", signal), dohLookup(name, "AAAA", signal)]);
  const addresses = [...a.addresses, ...aaaa.addresses];
  const bad = addresses.find((ip) => !isPublicAddress(ip));
  if (bad !== undefined) throw notAllowed(url.href, `${name} resolves to ${excerpt(bad, 45)}, which is not a public address`, via);
  if (addresses.length === 0) {
    const nx = a.status === 3 || aaaa.status === 3;
    throw new ToolError("download_failed", `'${excerpt(name, 60)}' ${nx ? "does not exist (NXDOMAIN)" : "has no A or AAAA records"}.`, {
      hint: "Check the URL's host name for typos.",
      retryable: !nx,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The fetch

const tooLargeError = (url: string, size: number | null, max: number) =>
  new ToolError("download_too_large", `'${excerpt(url)}' is ${size === null ? "larger than" : `${size} bytes (Content-Length); the limit is`} ${max} bytes.`, {
    hint: `Only files up to ${max} bytes can be downloaded into the store; split the file at its source or fetch a smaller one.`,
  });

function failedStatus(url: string, status: number): ToolError {
  const retryable = status === 408 || status === 425 || status === 429 || status >= 500;
  return new ToolError("download_failed", `'${excerpt(url)}' answered HTTP ${status}.`, {
    hint: retryable
      ? "The server is busy or failing; retry later."
      : status === 401 || status === 403
        ? "The file is not public; only URLs that need no credentials can be downloaded."
        : status === 404 || status === 410
          ? "Check the URL; the file is not there."
          : "Check the URL; the server refused the request.",
    retryable,
  });
}

/**
 * GETs a public https URL: checks it and every redirect target (syntax, IP literal, name, DNS),
 * follows at most `maxRedirects`, and reads at most `maxBytes` within `timeoutMs`. Throws
 * ToolError: url_not_allowed, too_many_redirects, download_too_large, download_timeout,
 * download_failed (network error, DNS failure or a non-2xx final status).
 */
export async function publicFetch(rawUrl: string, opts: PublicFetchOptions): Promise<PublicFetchResult> {
  let url = checkPublicUrl(rawUrl);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ToolError("download_timeout", "deadline")), opts.timeoutMs);
  const signal = controller.signal;
  try {
    let via: string | undefined;
    for (let hop = 0; ; hop++) {
      await resolvePublicHost(url, signal, via);
      let res: Response;
      try {
        res = await fetch(url.href, {
          method: "GET",
          redirect: "manual",
          signal,
          headers: { accept: "*/*", "user-agent": "agent-ledger-download/1" },
        });
      } catch (err) {
        if (signal.aborted) throw err;
        throw new ToolError("download_failed", `Fetching '${excerpt(url.href)}' failed: ${excerpt(err instanceof Error ? err.message : String(err))}.`, {
          hint: "Check that the host is up and serves https; retry later.",
          retryable: true,
        });
      }
      if (REDIRECT_STATUSES.has(res.status)) {
        await res.body?.cancel().catch(() => {});
        const location = res.headers.get("location");
        if (location === null) {
          throw new ToolError("download_failed", `'${excerpt(url.href)}' answered HTTP ${res.status} without a Location header.`, {
            hint: "The server sent a broken redirect; find the file's direct URL.",
          });
        }
        if (hop >= opts.maxRedirects) {
          throw new ToolError("too_many_redirects", `'${excerpt(rawUrl)}' redirected more than ${opts.maxRedirects} times.`, {
            hint: "Pass the final URL directly; a redirect loop or a long chain of redirects is not followed.",
          });
        }
        let next: string;
        try {
          next = new URL(location, url).href;
        } catch {
          throw notAllowed(location, "the Location header is not a valid URL", url.href);
        }
        via = url.href;
        url = checkPublicUrl(next, via);
        continue;
      }
      if (res.status < 200 || res.status > 299) {
        await res.body?.cancel().catch(() => {});
        throw failedStatus(url.href, res.status);
      }
      const declared = Number(res.headers.get("content-length") ?? "NaN");
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        await res.body?.cancel().catch(() => {});
        throw tooLargeError(url.href, declared, opts.maxBytes);
      }
      const bytes = await readCapped(res.body, opts.maxBytes, signal, () => tooLargeError(url.href, null, opts.maxBytes));
      return { finalUrl: url.href, status: res.status, contentType: res.headers.get("content-type"), bytes };
    }
  } catch (err) {
    if (signal.aborted && !(err instanceof ToolError && err.code !== "download_timeout")) {
      throw new ToolError("download_timeout", `Downloading '${excerpt(rawUrl)}' took longer than ${opts.timeoutMs} ms.`, {
        hint: "Retry, or pass a larger timeout_ms if the file is big or the server is slow.",
        retryable: true,
      });
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
