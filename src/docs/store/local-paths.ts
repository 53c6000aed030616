/**
 * Seed 003's forms that read or write the caller's own filesystem (add by `path`, get with
 * `outputPath`, restore to a folder, watch a local folder). This store runs on a server, which
 * has no filesystem of the caller's: each form is refused with one stable code and the way that
 * works here.
 */
import { excerpt, ToolError } from "../../core/errors";

export const NO_LOCAL_FILESYSTEM = "no_local_filesystem";

/** Whether a path can only mean a place on the caller's machine: absolute (POSIX, Windows drive or share) or home-relative. */
export function isLocalPath(path: string): boolean {
  return /^(?:\/.|~|[A-Za-z]:[\\/]|\\\\)/.test(path);
}

/** The refusal: `what` cannot be done here, `instead` what to do. */
export function noLocalFilesystem(what: string, instead: string): ToolError {
  return new ToolError(NO_LOCAL_FILESYSTEM, `${what}: this store runs on a server, with no access to your filesystem.`, { hint: instead });
}

/** A caller's path, quoted short for a message. */
export const quotedPath = (path: string) => `'${excerpt(path, 80)}'`;
