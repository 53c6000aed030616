/**
 * Progress of long work (imports, exports): a bar redrawn in place on a terminal, and on anything
 * else (a pipe, CI's log) one plain line per step, so logs stay readable.
 */
import type { Out } from "./output";

export interface Progress {
  /** `done` of `total` (total 0 when unknown), with what is being worked on. */
  update(done: number, total: number, label?: string): void;
  finish(summary: string): void;
}

const WIDTH = 24;

export function progress(out: Out, title: string): Progress {
  let lastLine = "";
  if (out.json) return { update: () => undefined, finish: () => undefined };
  return {
    update(done, total, label = "") {
      if (out.tty) {
        const share = total > 0 ? Math.min(1, done / total) : 0;
        const filled = Math.round(share * WIDTH);
        const bar = total > 0 ? `[${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${done}/${total}` : `${done}`;
        process.stderr.write(`\r\x1b[2K${title} ${bar} ${label.slice(0, 50)}`);
      } else {
        const line = `${title}: ${done}${total > 0 ? `/${total}` : ""}${label ? ` ${label}` : ""}`;
        if (line !== lastLine) out.stderr(line);
        lastLine = line;
      }
    },
    finish(summary) {
      if (out.tty) process.stderr.write("\r\x1b[2K");
      out.stderr(summary);
    },
  };
}
