/** The git toolset (seed 002 over the GitHub API): every tool, in the seed's order. */
import type { AnyToolDef } from "../mcp/define-tool";
import { batchCommit } from "./batch-commit";
import { gitCherryPick } from "./cherry-pick";
import { gitMerge } from "./merge";

export const gitTools: AnyToolDef[] = [
  batchCommit,
  gitMerge,
  gitCherryPick,
];
