/**
 * Copies the dashboard screenshots docs/dashboard.md shows from the browser test's folder
 * (test-results/dashboard, written by `vitest run --config vitest.e2e.config.ts test/e2e/dashboard.e2e.test.ts`)
 * into docs/img/dashboard. `npm run docs:screenshots` runs the test, then this.
 */
import { copyFile, mkdir, stat } from "node:fs/promises";
import path from "node:path";

const ROOT = path.join(import.meta.dirname, "..");
const FROM = process.env.DASHBOARD_SCREENSHOTS || path.join(ROOT, "test-results/dashboard");
const TO = path.join(ROOT, "docs/img/dashboard");

/** The shots the docs page links, by the browser test's names. */
const DOCS_SHOTS = ["overview-light", "board-light", "task-dark", "plan-light", "inbox-phone-dark", "changes-light"] as const;

await mkdir(TO, { recursive: true });
for (const name of DOCS_SHOTS) {
  const from = path.join(FROM, `${name}.png`);
  const size = (await stat(from).catch(() => null))?.size;
  if (!size) throw new Error(`${from} is missing: run the dashboard's browser test first (npm run docs:screenshots runs it).`);
  await copyFile(from, path.join(TO, `${name}.png`));
  console.info(`docs/img/dashboard/${name}.png ${Math.round(size / 1024)} KiB`);
}
