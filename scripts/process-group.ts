/**
 * wrangler dev and the workerd processes it starts, run as one process group that lives and dies
 * with the script that started it. wrangler does not always take workerd down itself (a signal that
 * reaches wrangler but not workerd, or a shell that signals only `npm`), so the whole group is signalled.
 */
import { execFileSync, type ChildProcess } from "node:child_process";

/** Signals every process in the group led by `pid`; false when the group is gone. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (!pid) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * This process's ancestors in its own process group: `npm`, the shell npm runs the script in, tsx.
 * The user's shell leads another group, so it is not among them. When one of these exits (a shell or
 * a process manager that signals `npm` alone, and npm leaves), nothing will ever stop the server:
 * their exit is the signal to stop.
 */
function groupAncestors(): number[] {
  const ancestors: number[] = [];
  try {
    const pgid = Number(execFileSync("ps", ["-o", "pgid=", "-p", String(process.pid)], { encoding: "utf8" }).trim());
    for (let pid = process.ppid; pid > 1 && ancestors.length < 16;) {
      const [ppid, group] = execFileSync("ps", ["-o", "ppid=,pgid=", "-p", String(pid)], { encoding: "utf8" })
        .trim()
        .split(/\s+/)
        .map(Number);
      if (group !== pgid) break;
      ancestors.push(pid);
      pid = ppid!;
    }
  } catch {
    // No `ps` (or the parent is already gone): the parent alone is watched.
  }
  return ancestors.length > 0 ? ancestors : [process.ppid];
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Ties `child` (spawned with `detached: true`, so it leads its own group) to this process:
 * SIGINT, SIGTERM and SIGHUP, or the exit of the processes that started this one, stop the whole
 * group, with SIGKILL after `graceMs` for whatever ignores the signal; when the child exits, this
 * process exits with its code, and nothing of the group survives it.
 */
export function superviseGroup(child: ChildProcess, graceMs = 5_000): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    signalGroup(child.pid, signal);
    setTimeout(() => signalGroup(child.pid, "SIGKILL"), graceMs).unref();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGHUP", () => stop("SIGTERM"));
  const ancestors = groupAncestors();
  setInterval(() => {
    if (!ancestors.every(alive)) stop("SIGTERM");
  }, 500).unref();
  // However this process ends (the child's exit, an uncaught error), workerd must not outlive it.
  process.on("exit", () => signalGroup(child.pid, "SIGKILL"));
  child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" || signal === "SIGTERM" ? 0 : 1)));
}
