/** The auto room: review_auto, which picks the review for what it is given. */
import type { AnyToolDef } from "../../core/define-tool";
import { reviewAutoTool } from "./review";

export const autoTools: AnyToolDef[] = [reviewAutoTool];
