/** The static analysis room: what GitHub's analyzers reported, as review findings. */
import type { AnyToolDef } from "../../core/define-tool";
import { runStaticAnalysisTool } from "./run";

export const staticTools: AnyToolDef[] = [runStaticAnalysisTool];
