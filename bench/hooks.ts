/**
 * Hook answer time (not a test): `npm run bench:hooks`. Claude Code waits for an http hook before
 * the edit goes ahead, so its answer time is the agent's. POSTs documented PreToolUse, PostToolUse,
 * Stop and SessionStart events to /mcp/hooks/claude-code with a holder's reservations, prior
 * attempts and claimed tasks in place, and prints p50/p99 beside `GET /healthz` (the floor).
 */
import { load, mcpSession, startBenchServer } from "./lib";

const REQUESTS = Number(process.env.BENCH_HOOK_REQUESTS ?? 300);
const REPO = "bench/app";
const CWD = "/home/dev/app";

async function main(): Promise<void> {
  const server = await startBenchServer();
  try {
    const holderKey = await server.key("hooks", "holder");
    const agentKey = await server.key("hooks", "agent");
    const holder = await mcpSession(server.base, holderKey, "/mcp?toolsets=coordination,repos,changes,projects,tasks");
    await holder("repo_register", { slug: REPO });
    for (let i = 0; i < 50; i++) await holder("path_reserve", { repository_id: REPO, paths: [`pkg/${i}/`] });
    for (let i = 0; i < 20; i++) {
      await holder("log_change", { entity_path: `src/mod${i}.ts`, change_type: "add", reasoning: `try ${i}` });
      await holder("log_change", { entity_path: `src/mod${i}.ts`, change_type: "revert", reasoning: `undo ${i}` });
    }
    const url = `${server.base}/mcp/hooks/claude-code?repository=${REPO}`;
    const post = async (event: unknown) => {
      const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${agentKey}` }, body: JSON.stringify(event) });
      if (res.status !== 200) throw new Error(`hook answered ${res.status}`);
      await res.text();
    };
    const edit = (file: string, name = "PreToolUse") => ({
      session_id: "bench",
      transcript_path: "/t.jsonl",
      cwd: CWD,
      hook_event_name: name,
      tool_name: "Edit",
      tool_input: { file_path: `${CWD}/${file}`, old_string: "a", new_string: "b" },
    });
    const cases: Array<[string, () => Promise<void>]> = [
      ["GET /healthz (floor)", async () => void (await (await fetch(`${server.base}/healthz`)).text())],
      ["PreToolUse, a reserved path (deny)", () => post(edit("pkg/7/a.ts"))],
      ["PreToolUse, prior attempts (context)", () => post(edit("src/mod3.ts"))],
      ["PreToolUse, nothing to say ({})", () => post(edit("docs/readme.md"))],
      ["PostToolUse (edit noted)", () => post(edit("docs/readme.md", "PostToolUse"))],
      ["Stop (unlogged edits)", () => post({ session_id: "bench", cwd: CWD, hook_event_name: "Stop", stop_hook_active: false })],
      ["SessionStart (digest)", () => post({ session_id: "bench", cwd: CWD, hook_event_name: "SessionStart", source: "startup" })],
    ];
    console.log(`\n## Hook answer time, ${REQUESTS} requests per cell, 50 reservations and 20 undone changes in place\n`);
    console.log("| event | clients | req/s | p50 ms | p99 ms |");
    console.log("|---|---|---|---|---|");
    for (const [label, once] of cases) {
      await load(20, 1, once);
      for (const concurrency of [1, 8]) {
        const f = await load(REQUESTS, concurrency, once);
        console.log(`| ${label} | ${concurrency} | ${f.rps.toFixed(1)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} |`);
      }
    }
  } finally {
    await server.close();
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
