/** The diff room: review_diff, the deterministic review of a unified diff. */
import type { AnyToolDef } from "../../core/define-tool";
import { reviewDiffTool } from "./review";

export const diffTools: AnyToolDef[] = [reviewDiffTool];
