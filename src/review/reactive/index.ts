/** The reactive review room: a session per change on GitHub, started, watched, steered and listed. */
import type { AnyToolDef } from "../../core/define-tool";
import { listReviewSessionsTool } from "./list";
import { reactiveReviewPrTool } from "./start";
import { getReviewStatusTool, getReviewTelemetryTool } from "./status";
import { pauseReviewTool, resumeReviewTool } from "./steer";

export const reactiveTools: AnyToolDef[] = [reactiveReviewPrTool, getReviewStatusTool, pauseReviewTool, resumeReviewTool, getReviewTelemetryTool, listReviewSessionsTool];
