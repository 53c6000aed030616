/** The invariants room: check_invariants, a repository's own rules run over a change. */
import type { AnyToolDef } from "../../core/define-tool";
import { checkInvariantsTool } from "./check";

export const invariantsTools: AnyToolDef[] = [checkInvariantsTool];
