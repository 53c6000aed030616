/** The LLM review room: review_changes (a diff given) and review_git_diff (a change on GitHub). */
import type { AnyToolDef } from "../../core/define-tool";
import { reviewChangesTool, reviewGitDiffTool } from "./review";

export const llmTools: AnyToolDef[] = [reviewChangesTool, reviewGitDiffTool] as unknown as AnyToolDef[];
