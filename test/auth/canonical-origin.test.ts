/** The origin tokens and keys are issued for: https, except plain http kept for loopback (src/auth/oauth.ts). */
import { describe, expect, it } from "vitest";
import { canonicalOrigin } from "../../src/auth/oauth";

const of = (url: string) => canonicalOrigin(new URL(url));

describe("canonicalOrigin", () => {
  it("keeps plain http on loopback", () => {
    expect(of("http://127.0.0.1:8787/mcp")).toBe("http://127.0.0.1:8787");
    expect(of("http://127.9.200.1/mcp")).toBe("http://127.9.200.1");
    expect(of("http://localhost:8787/mcp")).toBe("http://localhost:8787");
    expect(of("http://[::1]:8787/mcp")).toBe("http://[::1]:8787");
    // The URL parser spells shorthand IPv4 out in full first.
    expect(of("http://127.1/mcp")).toBe("http://127.0.0.1");
  });

  it("treats plain http on any other host as its https twin", () => {
    expect(of("http://ledger.example.com/mcp")).toBe("https://ledger.example.com");
    expect(of("http://127.0.0.1.example.com/mcp")).toBe("https://127.0.0.1.example.com");
    expect(of("http://128.0.0.1/mcp")).toBe("https://128.0.0.1");
    expect(of("http://localhost.example.com/mcp")).toBe("https://localhost.example.com");
    expect(of("http://10.0.0.1:8787/mcp")).toBe("https://10.0.0.1:8787");
  });

  it("leaves https as it is", () => {
    expect(of("https://ledger.example.com/mcp")).toBe("https://ledger.example.com");
    expect(of("https://127.0.0.1:8443/mcp")).toBe("https://127.0.0.1:8443");
  });
});
