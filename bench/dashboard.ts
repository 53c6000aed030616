/**
 * Dashboard page render time (not a test): `npm run bench:dashboard`. Seeds one project with
 * 10,000 tasks (a few of them claimed) through the tools, signs in at /app as a browser does, and
 * prints p50/p99 of whole page loads beside `GET /healthz` (the floor). Pages that do not exist
 * yet on this server are reported as such, not timed.
 */
import { load, mcpSession, startBenchServer } from "./lib";

const TASKS = Number(process.env.BENCH_DASHBOARD_TASKS ?? 10_000);
const REQUESTS = Number(process.env.BENCH_DASHBOARD_REQUESTS ?? 50);

/** A browser's cookie jar, enough for the sign-in form and the session. */
async function signIn(base: string, key: string): Promise<string> {
  const page = await fetch(`${base}/app/signin`);
  const csrfCookie = page.headers
    .getSetCookie()
    .find((c) => c.startsWith("__Host-ledger-csrf="))!
    .split(";")[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const res = await fetch(`${base}/app/signin`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base, Cookie: csrfCookie },
    body: new URLSearchParams({ csrf, api_key: key }).toString(),
  });
  const session = res.headers.getSetCookie().find((c) => c.startsWith("__Host-ledger-app="));
  if (!session) throw new Error(`sign-in answered ${res.status}`);
  return session.split(";")[0]!;
}

async function main(): Promise<void> {
  const server = await startBenchServer();
  try {
    const key = await server.key("dashboard", "lead");
    const call = await mcpSession(server.base, key, "/mcp?toolsets=all");
    await call("project_create", { title: "Big board", key: "BIG" });
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i += 100) {
      const r = (await call("task_create_many", {
        project_id: "BIG",
        tasks: Array.from({ length: Math.min(100, TASKS - i) }, (_, j) => ({ title: `Task ${i + j}`, priority: (i + j) % 5, labels: [(i + j) % 3 ? "backend" : "frontend"] })),
      })) as { task_ids: string[] };
      ids.push(...r.task_ids);
    }
    for (const id of ids.slice(0, 20)) await call("task_claim", { task_id: id, lease_seconds: 3600 });
    const cookie = await signIn(server.base, key);
    const page = (path: string) => async () => {
      const res = await fetch(`${server.base}${path}`, { headers: { Cookie: cookie }, redirect: "manual" });
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
      await res.text();
    };
    console.log(`\n## Dashboard page loads, ${TASKS} tasks in one project, ${REQUESTS} requests per cell\n`);
    console.log("| page | clients | p50 ms | p99 ms |");
    console.log("|---|---|---|---|");
    const cases: Array<[string, string]> = [
      ["GET /healthz (floor)", "/healthz"],
      ["overview", "/app"],
      ["project board", "/app/projects/BIG"],
      ["task page", `/app/tasks/${ids[0]}`],
    ];
    for (const [label, path] of cases) {
      const probe = await fetch(`${server.base}${path}`, { headers: { Cookie: cookie }, redirect: "manual" });
      await probe.text();
      if (probe.status !== 200) {
        console.log(`| ${label} | - | not on this server (${probe.status}) | |`);
        continue;
      }
      for (const clients of [1, 4]) {
        const f = await load(REQUESTS, clients, page(path));
        console.log(`| ${label} | ${clients} | ${f.p50.toFixed(1)} | ${f.p99.toFixed(1)} |`);
      }
    }
  } finally {
    await server.close();
  }
}

await main();
