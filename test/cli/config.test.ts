import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, configPath, loadConfig, normalizeUrl, requireConfig, saveConfig } from "../../src/cli/config";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "al-config-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("command-line configuration", () => {
  it("finds the file by AGENT_LEDGER_CONFIG, XDG_CONFIG_HOME, then HOME", () => {
    expect(configPath({ AGENT_LEDGER_CONFIG: "/x/c.json", XDG_CONFIG_HOME: "/y" })).toBe("/x/c.json");
    expect(configPath({ XDG_CONFIG_HOME: "/y", HOME: "/h" })).toBe("/y/agent-ledger/config.json");
    expect(configPath({ HOME: "/h" })).toBe("/h/.config/agent-ledger/config.json");
  });

  it("normalizes a typed URL", () => {
    expect(normalizeUrl("ledger.example.com/")).toBe("https://ledger.example.com");
    expect(normalizeUrl("localhost:8787")).toBe("http://localhost:8787");
    expect(normalizeUrl("https://ledger.example.com/team/mcp/")).toBe("https://ledger.example.com/team");
  });

  it("writes the file owner-only and reads it back", async () => {
    const file = join(dir, "nested", "config.json");
    await saveConfig(file, { url: "http://127.0.0.1:1", key: "alk_x" });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "nested"))).mode & 0o777).toBe(0o700);
    expect(await loadConfig({ AGENT_LEDGER_CONFIG: file })).toMatchObject({ url: "http://127.0.0.1:1", key: "alk_x", source: "file" });
  });

  it("refuses a file others can read, with the chmod to fix it", async () => {
    const file = join(dir, "config.json");
    await writeFile(file, JSON.stringify({ url: "http://a", key: "alk_y" }));
    await chmod(file, 0o644);
    const err = await loadConfig({ AGENT_LEDGER_CONFIG: file }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).hint).toBe(`Run: chmod 600 ${file}`);
  });

  it("environment wins over the file; the file's key is not sent to another server", async () => {
    const file = join(dir, "config.json");
    await saveConfig(file, { url: "http://saved", key: "alk_saved" });
    expect(await loadConfig({ AGENT_LEDGER_CONFIG: file, AGENT_LEDGER_URL: "http://other", AGENT_LEDGER_KEY: "alk_env" })).toMatchObject({ url: "http://other", key: "alk_env", source: "env" });
    const noKey = await loadConfig({ AGENT_LEDGER_CONFIG: file, AGENT_LEDGER_URL: "http://other" });
    expect(noKey?.key).toBeUndefined();
    expect(await loadConfig({ AGENT_LEDGER_CONFIG: file, AGENT_LEDGER_KEY: "alk_env" })).toMatchObject({ url: "http://saved", key: "alk_env" });
  });

  it("no configuration is an error that says how to log in; a broken file says how to rewrite it", async () => {
    const missing = await requireConfig({ AGENT_LEDGER_CONFIG: join(dir, "none.json") }).catch((e: unknown) => e);
    expect((missing as ConfigError).hint).toContain("agent-ledger login");
    const file = join(dir, "bad.json");
    await writeFile(file, "{not json", { mode: 0o600 });
    expect(((await loadConfig({ AGENT_LEDGER_CONFIG: file }).catch((e: unknown) => e)) as ConfigError).message).toContain("not valid JSON");
    await writeFile(file, JSON.stringify({ key: "k" }), { mode: 0o600 });
    expect(((await loadConfig({ AGENT_LEDGER_CONFIG: file }).catch((e: unknown) => e)) as ConfigError).message).toContain("names no server url");
    expect(await readFile(file, "utf8")).toContain("k");
  });
});
