/** The git toolset (seed 002 over the GitHub API): every tool, in the seed's order. */
import type { AnyToolDef } from "../core/define-tool";
import { batchCommit } from "./batch-commit";
import { gitCherryPick } from "./cherry-pick";
import { gitDiffSummaryTool } from "./diff";
import { gitInventoryTool, gitParityTool } from "./inventory";
import { gitLogTool } from "./log";
import { gitMerge } from "./merge";
import { listPresetsTool } from "./presets";
import { gitStatusTool } from "./status";

export const gitTools: AnyToolDef[] = [gitStatusTool, gitInventoryTool, gitParityTool, listPresetsTool, batchCommit, gitDiffSummaryTool, gitLogTool, gitMerge, gitCherryPick];
