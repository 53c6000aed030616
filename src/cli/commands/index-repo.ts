/**
 * `index <owner/name>`: starts indexing a repository for the code tools (index_workspace, or
 * reindex_workspace with --reindex) and follows the job with index_status until it is searchable or
 * has failed, with a progress bar on a terminal. The job runs on the server's Workflow either way:
 * interrupting the command stops only the watching, and `--no-wait` does not watch at all.
 */
import { takeBool, takeString, UsageError, type Split } from "../args";
import type { Ledger } from "../connection";
import { EXIT, printError, printResult, type Out } from "../output";
import { progress } from "../progress";

const POLL_MS = 1000;
const DONE = new Set(["complete", "idle"]);

export async function indexCommand(ledger: Ledger, words: Split, out: Out, signal: AbortSignal, pollMs = POLL_MS): Promise<number> {
  const repo = words.positionals.shift();
  if (!repo) throw new UsageError("index needs a repository.", "agent-ledger index owner/name [--ref main] [--reindex] [--no-wait]");
  const ref = takeString(words, "ref");
  const tool = takeBool(words, "reindex") ? "reindex_workspace" : "index_workspace";
  const wait = !words.flags.has("no-wait");
  words.flags.delete("no-wait");
  const started = await ledger.call(tool, { repo, ...(ref ? { ref } : {}) });
  if (!started.envelope.ok || !wait) return printResult(out, started.envelope, started.text);
  const job = String(started.envelope.job_id ?? "");
  const bar = progress(out, `index ${repo}`);
  while (!signal.aborted) {
    const { envelope } = await ledger.call("index_status", { repo, check_head: false });
    if (!envelope.ok) return printResult(out, envelope, "");
    // This job's own row; before it shows, the row of the ref asked for.
    const items = (envelope.items as Array<Record<string, unknown>>) ?? [];
    const item = items.find((i) => i.job_id === job) ?? items.find((i) => !ref || i.ref === ref);
    if (item) {
      bar.update(Number(item.files_done ?? 0), Number(item.files_total ?? 0), String(item.phase ?? ""));
      if (item.phase === "failed") {
        bar.finish(`index ${repo}: failed`);
        printError(
          out,
          "index_failed",
          ((item.errors as string[]) ?? []).slice(-1)[0] ?? "the indexing job failed",
          "agent-ledger index-status --repo <owner/name> shows the errors; run `agent-ledger index <repo>` again to resume.",
        );
        return EXIT.toolError;
      }
      if (item.job_id === job && item.complete === true && DONE.has(String(item.phase))) {
        bar.finish(`index ${repo}: complete at ${String(item.indexed_commit).slice(0, 12)}, ${item.files_done} file(s), ${item.chunks} chunk(s), ${item.symbols} symbol(s)`);
        if (out.json) out.stdout(JSON.stringify({ ok: true, ...item }, null, 2));
        return EXIT.ok;
      }
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, pollMs);
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
  out.stderr(`Stopped watching; the job ${job} goes on (agent-ledger index-status shows it).`);
  return EXIT.ok;
}
