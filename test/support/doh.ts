/**
 * DNS-over-HTTPS answers for tests whose code checks where a name points before fetching it
 * (src/net/public-fetch.ts): a stubbed fetch hands DoH URLs here.
 */
import { DOH_ENDPOINT } from "../../src/net/public-fetch";

const PUBLIC_V4 = "93.184.215.14";

export interface DnsRecords {
  A?: string[];
  AAAA?: string[];
}

/** The DoH answer for `url`, or null when it is not a DoH query; names not in `dns` resolve to PUBLIC_V4. */
export function dohAnswer(url: string, dns: Record<string, DnsRecords> = {}): Response | null {
  if (!url.startsWith(`${DOH_ENDPOINT}?`)) return null;
  const q = new URL(url).searchParams;
  const name = q.get("name")!;
  const type = q.get("type") as "A" | "AAAA";
  const records = dns[name] ?? { A: [PUBLIC_V4] };
  const answers = (records[type] ?? []).map((data) => ({ name, type: type === "A" ? 1 : 28, TTL: 60, data }));
  return Response.json({ Status: 0, Answer: answers });
}

export const isDoh = (url: string) => url.startsWith(`${DOH_ENDPOINT}?`);
