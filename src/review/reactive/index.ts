/** The reactive review room: a session per change on GitHub, started, watched and steered. */
import type { AnyToolDef } from "../../core/define-tool";
import { reactiveReviewPrTool } from "./start";
import { getReviewStatusTool, getReviewTelemetryTool } from "./status";
import { pauseReviewTool, resumeReviewTool } from "./steer";

export const reactiveTools: AnyToolDef[] = [reactiveReviewPrTool, getReviewStatusTool, pauseReviewTool, resumeReviewTool, getReviewTelemetryTool];
